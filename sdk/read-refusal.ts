/**
 * What a `provider/verify` reports when the JSONL reader refuses a file's bytes. Such a file is one
 * the client cannot use, which is what verify exists to say: `gobstopper verify` shows it as an
 * error finding and exits 1, and apply compares it like any other finding. Only a path that cannot
 * be read at all (missing, not a regular file, a link, no permission) is a thrown error. Every
 * provider maps the reader's refusals here, so the same file gets the same code and words.
 */
import type { Finding } from '../schemas/generated/types.js';
import { JsonlInputError, JsonlLimitError } from './jsonl.js';

function refusal(code: string, message: string, line: number | null = null): Finding {
  return { severity: 'error', code, message, line_index: line };
}

/** The finding for a reader refusal, or null when `error` is something verify cannot judge. */
export function readRefusalFinding(error: unknown): Finding | null {
  if (error instanceof JsonlInputError) {
    if (error.reason === 'empty') return refusal('empty_transcript', 'the file is empty: the client finds no conversation');
    if (error.reason === 'binary') return refusal('binary_content', 'the file contains NUL bytes: it is not JSONL');
    return null;
  }
  if (!(error instanceof JsonlLimitError)) return null;
  // A line over the record limit is not read past: nothing after it can be judged.
  if (error.limit === 'line') return refusal('oversized_record', `${error.message}; the rest of the file was not read`, error.line);
  return refusal(error.limit === 'bytes' ? 'over_byte_limit' : 'over_record_limit', error.message);
}
