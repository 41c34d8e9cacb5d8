/**
 * Codex shortens a long tool output every time it puts history back into a request, resume
 * included: the rollout keeps the whole text, the model gets its head and tail around a
 * `…N chars truncated…` marker. Measured with codex 0.171 offline (docs/rehearsal.md): a budget of
 * `tool_output_token_limit` tokens keeps outputs up to 4.8 bytes per token (4 bytes per token,
 * plus the client's 20% allowance) and cuts longer ones to that many bytes.
 *
 * Older rollouts record the turn's policy (`turn_context.truncation_policy`); 0.171 records none,
 * and the resuming model's own limit applies, which for the models these rollouts name is 10,000
 * tokens, the value every recorded tokens policy carries. The newest recorded policy wins: a
 * resume applies one limit to the whole history.
 */
import type { Json } from './records.js';

/** The budget when a rollout records none. */
export const DEFAULT_OUTPUT_TOKEN_LIMIT = 10_000;
const BYTES_PER_TOKEN = 4;
const ALLOWANCE = 1.2;
/** `…` twice (3 bytes each) around "N chars truncated". */
const MARKER_BYTES = 6 + ' chars truncated'.length + 7;

/**
 * The token budget a `truncation_policy` object stands for, or null when it is not one the client
 * writes (`{"mode":"tokens"|"bytes","limit":n}`).
 */
export function policyTokenLimit(policy: Json | undefined): number | null {
  if (typeof policy !== 'object' || policy === null || Array.isArray(policy)) return null;
  const { mode, limit } = policy as { mode?: unknown; limit?: unknown };
  if (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit <= 0) return null;
  if (mode === 'tokens') return limit;
  if (mode === 'bytes') return Math.max(1, Math.floor(limit / BYTES_PER_TOKEN));
  return null;
}

/** Output bytes the client keeps under a token budget. */
export function keptOutputBytes(tokenLimit: number): number {
  return Math.floor(tokenLimit * BYTES_PER_TOKEN * ALLOWANCE);
}

/**
 * Bytes an output item is sent as once its text is cut to `keptBytes`: the payload shrinks with its
 * text, and the marker is added. Unchanged when the text fits.
 */
export function sentAfterTruncation(payloadSentBytes: number, outputBytes: number, keptBytes: number): number {
  if (outputBytes <= keptBytes || outputBytes === 0) return payloadSentBytes;
  const shrunk = Math.ceil((payloadSentBytes * keptBytes) / outputBytes) + MARKER_BYTES;
  return Math.min(payloadSentBytes, shrunk);
}
