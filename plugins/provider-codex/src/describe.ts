/**
 * One rollout described from its head and tail: the session handle, reported usage, and an
 * estimate when nothing is reported. Shared by discover, identify and usage.
 */
import { basename } from 'node:path';
import type { DiscoveredSession, SessionHandle } from '../../../sdk/index.js';
import type { UsageSample } from '../../../sdk/index.js';
import { FALLBACK_TAIL_BYTES, HEAD_BYTES, TAIL_BYTES, readEnds } from './ends.js';
import { identifyHead } from './head.js';
import { PROVIDER_ID } from './provider-id.js';
import { parseRolloutName } from './rollout-name.js';
import { usageFromTail } from './tail.js';

/** Returns null when the file is not a Codex rollout. Throws what reading throws. */
export function describeRollout(path: string): DiscoveredSession | null {
  const ends = readEnds(path);
  const head = identifyHead(ends.head, ends.headIsPartialLine);
  if (!head.isCodex) return null;
  const session: SessionHandle = {
    provider: PROVIDER_ID,
    session_id: head.id ?? parseRolloutName(path)?.id ?? basename(path, '.jsonl'),
    path,
    cwd: head.cwd,
    kind: head.kind,
    bytes: ends.size,
    mtime_ms: ends.mtimeMs,
  };
  let { usage, estimatedContextTokens } = usageFromTail(ends, head.model);
  let bytesRead = ends.bytesRead;
  // No report in the tail: read further back (a smaller file whole) rather than call it empty.
  for (let tailBytes = TAIL_BYTES; !settled(usage) && !ends.wholeFile && tailBytes < FALLBACK_TAIL_BYTES; ) {
    tailBytes = Math.min(tailBytes * 4, FALLBACK_TAIL_BYTES);
    const wider = readEnds(path, HEAD_BYTES, tailBytes);
    bytesRead += wider.bytesRead;
    ({ usage, estimatedContextTokens } = usageFromTail(wider, head.model));
    if (wider.wholeFile) break;
  }
  return {
    session,
    usage,
    estimated_context_tokens: estimatedContextTokens,
    bytes_read: bytesRead,
  };
}

function settled(usage: UsageSample): boolean {
  return usage.context_state === 'reported' || usage.context_state === 'reset';
}
