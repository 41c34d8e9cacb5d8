/**
 * An index line and the manifest it names must describe the same bytes. The index is a plain file a
 * person can edit or damage; a line naming a manifest that is gone, or another session's, would
 * otherwise read as "no such snapshot" or restore a different session than the one asked for.
 */
import type { VaultEntry } from '../../schemas/generated/types.js';
import { GobstopperError } from '../errors.js';
import { vaultDamaged } from './errors.js';
import type { VaultLayout } from './layout.js';
import { loadManifest, type LoadedManifest } from './manifest.js';

/** The manifest `entry` names, checked against the line: same source digest, same size. */
export async function manifestOfEntry(layout: VaultLayout, entry: VaultEntry, env: NodeJS.ProcessEnv = process.env): Promise<LoadedManifest> {
  const id = entry.sha256.slice(0, 16);
  let loaded: LoadedManifest;
  try {
    loaded = await loadManifest(layout, entry.sha256, env);
  } catch (error) {
    if (!(error instanceof GobstopperError && error.code === 'snapshot_not_found')) throw error;
    throw vaultDamaged(
      layout.index,
      `a line names snapshot ${id} of ${entry.provider} ${entry.session_id}, which is not in the vault`,
      `restore manifests/${entry.sha256} from a backup, or, if ${entry.path} is unchanged since, run gobstopper snapshot ${entry.path} to write it again`,
    );
  }
  const { manifest } = loaded;
  if (manifest.source_sha256 !== entry.source_sha256 || manifest.bytes !== entry.bytes) {
    throw vaultDamaged(
      layout.index,
      `the line for snapshot ${id} says it archived ${entry.bytes} bytes of ${entry.provider} ${entry.session_id} (source ${entry.source_sha256.slice(0, 16)}), but that snapshot holds ${manifest.bytes} bytes (source ${manifest.source_sha256.slice(0, 16)})`,
      `set that line's bytes to ${manifest.bytes} and its source_sha256 to ${manifest.source_sha256} if it is that session's, or delete the line (the snapshot stays in the vault and prune keeps it as unindexed)`,
    );
  }
  return loaded;
}
