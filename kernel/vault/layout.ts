/** Where each part of the vault lives under `<data>/vault`. */
import { join } from 'node:path';
import { dataDir, type PathEnv } from '../paths.js';
import { checkPrivateDir, ensurePrivateDir } from './private-fs.js';

export interface VaultLayout {
  root: string;
  chunks: string;
  manifests: string;
  operations: string;
  pins: string;
  /** One file of state cards per snapshot (card-file.ts), so recall need not read the snapshot. */
  cards: string;
  /** Hold files of snapshotters in progress; prune waits for them (see custody.ts). */
  custody: string;
  index: string;
  indexLock: string;
  custodyLock: string;
  /** The snapshots a prune dropped from the index and has yet to delete (prune-journal.ts). */
  pruneJournal: string;
}

export function vaultLayoutAt(root: string): VaultLayout {
  return {
    root,
    chunks: join(root, 'chunks'),
    manifests: join(root, 'manifests'),
    operations: join(root, 'operations'),
    pins: join(root, 'pins'),
    cards: join(root, 'cards'),
    custody: join(root, 'custody'),
    index: join(root, 'index.jsonl'),
    indexLock: join(root, 'index.lock'),
    custodyLock: join(root, 'custody.lock'),
    pruneJournal: join(root, 'prune-pending.json'),
  };
}

export function vaultLayout(env: PathEnv = process.env): VaultLayout {
  return vaultLayoutAt(join(dataDir(env), 'vault'));
}

/** Creates every vault directory (0700) or verifies the existing ones. */
export async function ensureVault(layout: VaultLayout): Promise<void> {
  await ensurePrivateDir(layout.root);
  for (const dir of [layout.chunks, layout.manifests, layout.operations, layout.pins, layout.custody, layout.cards]) await ensurePrivateDir(dir);
}

/** For readers: false when there is no vault yet; throws when what exists is not private. */
export async function vaultExists(layout: VaultLayout): Promise<boolean> {
  if (!(await checkPrivateDir(layout.root))) return false;
  for (const dir of [layout.chunks, layout.manifests]) await checkPrivateDir(dir);
  return true;
}
