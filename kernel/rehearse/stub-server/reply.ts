import { randomBytes } from 'node:crypto';
import { estimateTokens } from '../../../sdk/tokens.js';

/** The one answer the stub gives to every model turn: short, fixed, and recognisable in a transcript. */
export const STUB_REPLY_TEXT = 'Rehearsal reply from the gobstopper stub model.';

export const STUB_MODEL = 'gobstopper-stub-model';

/**
 * Usage in the shape the vendors report, sized like the request the client sent, so a client that
 * records usage (both do) writes plausible numbers rather than zeros.
 */
export function replyUsage(requestBytes: number): { input_tokens: number; output_tokens: number } {
  return { input_tokens: estimateTokens(requestBytes), output_tokens: estimateTokens(Buffer.byteLength(STUB_REPLY_TEXT)) };
}

/**
 * Each reply needs its own id: Claude Code merges assistant records that share `message.id` into one
 * message, so a repeated id would glue replies of different turns together.
 */
export function replyId(prefix: string, seq: number): string {
  return `${prefix}_stub_${String(seq).padStart(4, '0')}_${randomBytes(6).toString('hex')}`;
}
