/**
 * `vault --verify`'s look at the card files: each one read as recall reads it, against the manifest
 * its name gives, and, for a snapshot the check read back whole, against the cards its records
 * hold. Recall reads a snapshot whose card file it cannot use, so such a file loses nothing and is
 * reported as work recall keeps redoing; one naming a snapshot that is gone is left over; and one
 * that lists other cards than its snapshot holds (an edit) is what recall would answer wrongly from.
 */
import { join } from 'node:path';
import type { DamagedCardFile } from '../../schemas/generated/types.js';
import { GobstopperError } from '../errors.js';
import { VaultInsecureError } from './errors.js';
import type { VaultManifest } from '../../schemas/generated/types.js';
import { checkProblem } from './check-problem.js';
import { cardFileManifest, readCardFile, type CardFileClaim, type VaultCardFile } from './card-file.js';
import { chunkSpanReader, collectCards } from './card-index.js';
import type { CardLine } from './card-scan.js';
import type { VaultLayout } from './layout.js';
import { loadManifest } from './manifest.js';
import { checkPrivateDir, isTempName, namesIn } from './private-fs.js';

const DELETE_IT = 'delete it (the next recall reads the snapshot itself and writes the card file again)';

/** The manifest's size and digest to hold the card file to; null when the snapshot is not stored. */
async function claimOf(layout: VaultLayout, sha: string, env: NodeJS.ProcessEnv): Promise<(CardFileClaim & { manifest?: VaultManifest }) | null> {
  try {
    const { manifest } = await loadManifest(layout, sha, env);
    return { manifestSha256: sha, sourceSha256: manifest.source_sha256, bytes: manifest.bytes, manifest };
  } catch (error) {
    if (error instanceof GobstopperError && error.code === 'snapshot_not_found') return null;
    // A damaged manifest is the snapshot's damage, reported with it; the card file is checked alone.
    return { manifestSha256: sha };
  }
}

/** Whether the card file lists exactly the cards of the records the read-back found; null when that cannot be told now. */
async function listsItsCards(layout: VaultLayout, card: VaultCardFile, manifest: VaultManifest, lines: readonly CardLine[]): Promise<boolean | null> {
  try {
    const cards = await collectCards(lines, chunkSpanReader(layout, manifest.chunks, manifest.bytes));
    return JSON.stringify(cards) === JSON.stringify(card.cards);
  } catch {
    // Its chunks were read back whole just before: gone or changed since is a prune's doing or the snapshot's damage.
    return null;
  }
}

/**
 * The card files recall would not use or would answer wrongly from, sorted by file; with `only`,
 * just those of these snapshots. `scanned` holds the card records of the snapshots read back whole.
 * Temp files are a snapshotter's writes in progress (this check takes no custody) and are skipped.
 */
export async function damagedCardFiles(layout: VaultLayout, env: NodeJS.ProcessEnv, scanned: ReadonlyMap<string, CardLine[]>, only?: ReadonlySet<string>): Promise<DamagedCardFile[]> {
  let names: string[];
  try {
    if (!(await checkPrivateDir(layout.cards))) return [];
    names = await namesIn(layout.cards);
  } catch (error) {
    return [{ file: layout.cards, problem: checkProblem(error) }];
  }
  const damaged: DamagedCardFile[] = [];
  for (const name of names.sort()) {
    if (isTempName(name)) continue;
    const file = join(layout.cards, name);
    const sha = cardFileManifest(name);
    if (sha === null) {
      if (only === undefined) damaged.push({ file, problem: { code: 'card_file_damaged', message: `${file} is not named as a card file (<snapshot id>.json); move it out of the vault` } });
      continue;
    }
    if (only !== undefined && !only.has(sha)) continue;
    const claim = await claimOf(layout, sha, env);
    let card: VaultCardFile | null;
    try {
      card = await readCardFile(layout, claim ?? { manifestSha256: sha });
    } catch (error) {
      // The advice for other vault files (copy a link's target in, chmod) would keep a file that
      // is only a cache: deleting it loses nothing.
      if (error instanceof VaultInsecureError) damaged.push({ file, problem: { code: error.code, message: `card file ${file} ${error.problem}; ${DELETE_IT}` } });
      else damaged.push({ file, problem: checkProblem(error) });
      continue;
    }
    // Gone since the directory was read: a prune removed it with its snapshot.
    if (card === null) continue;
    const lines = scanned.get(sha);
    if (claim?.manifest !== undefined && lines !== undefined && (await listsItsCards(layout, card, claim.manifest, lines)) === false) {
      damaged.push({ file, problem: { code: 'card_file_mismatch', message: `card file ${file} does not list the state cards snapshot ${sha.slice(0, 16)} holds (edited since it was written); ${DELETE_IT}` } });
    }
    if (claim === null) damaged.push({ file, problem: { code: 'manifest_missing', message: `card file ${file} belongs to snapshot ${sha.slice(0, 16)}, which manifests/ does not hold; ${DELETE_IT}, or restore manifests/${sha} from a backup (prune deletes it too)` } });
  }
  return damaged;
}
