/**
 * What a `provider/verify` reports for a readable file that is not its provider's transcript at
 * all: another provider's, or JSONL of some other kind. Verify answers a file it can read with a
 * report, so this is one error finding, as the reader's refusals are (read-refusal.ts), never a
 * thrown error. The kernel hands a path only to the provider whose identify claims it, so whoever
 * meets this chose the provider themselves; the message names the way to the right one. Every
 * provider words it here, under its own code.
 */
import type { Finding } from '../schemas/generated/types.js';

/** `notWhat` completes "the file is not …": what the provider reads, and why this file is not it. */
export function foreignFileFinding(code: string, notWhat: string): Finding {
  return {
    severity: 'error',
    code,
    message: `the file is not ${notWhat}: verify it with the provider whose transcript it is (given the path, gobstopper verify picks the provider that recognises the file)`,
    line_index: null,
  };
}
