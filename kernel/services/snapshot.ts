/** `snapshot`: archive a session's exact bytes without compacting it. */
import type * as T from '../../schemas/generated/types.js';
import { usageError } from '../errors.js';
import { resolveSession } from '../sessions/selector.js';
import { vaultLayout } from '../vault/layout.js';
import { PRE_UNDO_LABEL } from '../vault/labels.js';
import { snapshotSettled } from '../vault/snapshot.js';
import type { Runtime } from './runtime.js';

/** What a label may be: the vault index's own rule for its strategy tags. */
const LABEL = /^[A-Za-z0-9_.:-]{1,128}$/;

/** `label` tags the index line (shown by vault, history, show and undo); `snapshot` by default. */
export async function snapshotSession(runtime: Runtime, selector: string, label = 'snapshot'): Promise<T.SnapshotCommandResult> {
  if (!LABEL.test(label)) throw usageError('invalid_label', `--label ${JSON.stringify(label)} is not a label: use 1-128 letters, digits, '_', '.', ':' or '-'`);
  // undo passes over states with this label when it picks the newest; a user's own would be skipped.
  if (label === PRE_UNDO_LABEL) throw usageError('invalid_label', `--label ${PRE_UNDO_LABEL} is the label undo gives the state it archives before restoring another, and undo skips such states; choose another label`);
  const { session } = await resolveSession(selector, await runtime.providers(), runtime.homes);
  const result = await snapshotSettled(vaultLayout(runtime.env), { path: session.path, sessionId: session.session_id, provider: session.provider, strategy: label, env: runtime.env });
  return { session, entry: result.entry, new_chunk_bytes: result.stored.newChunkBytes, already_archived: !result.newLine };
}
