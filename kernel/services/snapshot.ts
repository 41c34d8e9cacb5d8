/** `snapshot`: archive a session's exact bytes without compacting it. */
import type * as T from '../../schemas/generated/types.js';
import { resolveSession } from '../sessions/selector.js';
import { vaultLayout } from '../vault/layout.js';
import { snapshotSettled } from '../vault/snapshot.js';
import type { Runtime } from './runtime.js';

export async function snapshotSession(runtime: Runtime, selector: string): Promise<{ session: T.SessionHandle; entry: T.VaultEntry; new_chunk_bytes: number }> {
  const { session } = await resolveSession(selector, await runtime.providers(), runtime.homes);
  const result = await snapshotSettled(vaultLayout(runtime.env), { path: session.path, sessionId: session.session_id, provider: session.provider, strategy: 'snapshot', env: runtime.env });
  return { session, entry: result.entry, new_chunk_bytes: result.stored.newChunkBytes };
}
