/**
 * One rollout described from its head and tail: the session handle, reported usage, and an
 * estimate when nothing is reported. Shared by discover, identify and usage.
 */
import { basename } from 'node:path';
import type { DiscoveredSession, SessionHandle } from '../../../sdk/index.js';
import { readEnds } from './ends.js';
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
  const { usage, estimatedContextTokens } = usageFromTail(ends, head.model);
  return {
    session,
    usage,
    estimated_context_tokens: estimatedContextTokens,
    bytes_read: ends.bytesRead,
  };
}
