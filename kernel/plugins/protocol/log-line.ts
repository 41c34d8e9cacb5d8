/**
 * A host/log line whose message is longer than LogParams allows. The SDKs cut their messages to
 * the limit before sending; a plugin written by hand may not, and its warning would otherwise be
 * dropped unseen with the malformed lines. It is shown cut, saying by how much.
 */
import { MAX_LOG_MESSAGE_CHARS } from '../../../sdk/serve.js';

const marker = (rest: number) => ` … (${rest} more characters)`;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `params` with an overlong `message` cut to the limit (in code points, as the schema counts); else `params` itself. */
export function clipLogParams(params: unknown): unknown {
  if (!isRecord(params) || typeof params.message !== 'string' || params.message.length <= MAX_LOG_MESSAGE_CHARS) return params;
  const chars = Array.from(params.message);
  if (chars.length <= MAX_LOG_MESSAGE_CHARS) return params;
  // Room for the longest marker this message could need; the one written may be a digit shorter.
  const keep = MAX_LOG_MESSAGE_CHARS - marker(chars.length).length;
  return { ...params, message: chars.slice(0, keep).join('') + marker(chars.length - keep) };
}
