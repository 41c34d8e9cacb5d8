/**
 * `export`: the exact bytes of an archived state, whatever they hold, into a new file or down a
 * pipe. undo publishes only a state that would resume; a damaged transcript snapshotted before a
 * repair that went wrong is put back by hand from what this writes.
 */
import { constants, copyFileSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import type * as T from '../../schemas/generated/types.js';
import { usageError } from '../errors.js';
import { removeOnExit } from '../exit-cleanup.js';
import { faultPoint } from '../publish/faults.js';
import { assertNewOutputPath, linkIntoPlace, tempNameBeside } from '../eval/output-file.js';
import { restoreSnapshotToStaging } from '../publish/staging.js';
import { withSharedCustody } from '../vault/custody.js';
import { vaultLayout, type VaultLayout } from '../vault/layout.js';
import { PRIVATE_FILE_MODE } from '../vault/private-fs.js';
import { reconstructSnapshot } from '../vault/reconstruct.js';
import { chooseCheckedSnapshot } from './undo.js';

export interface ExportOptions {
  sha?: string;
  /** A new file to write; without one, `write` takes the bytes. */
  output?: string;
  /** Where the bytes go without `output` (a pipe); resolves once it is done with the chunk. */
  write?: (chunk: Buffer) => Promise<void>;
}

export interface ExportResult {
  snapshot: T.VaultEntry;
  /** The file written; null when the bytes went to `write`. */
  output: string | null;
  bytes: number;
  source_sha256: string;
}

export async function exportSnapshot(env: NodeJS.ProcessEnv, target: string, options: ExportOptions): Promise<ExportResult> {
  if (options.sha !== undefined && options.sha.trim() === '') throw usageError('invalid_sha', '--sha is empty; give a snapshot id (gobstopper history lists them), or leave --sha out for the newest');
  // Checked before the vault is read, so a taken name costs nothing.
  const output = options.output === undefined ? null : assertNewOutputPath(options.output);
  const layout = vaultLayout(env);
  // Chosen outside custody for its errors, then inside it, where prune cannot take the chunks away.
  await chooseCheckedSnapshot(layout, target, options.sha);
  return withSharedCustody(layout, async () => {
    const snapshot = await chooseCheckedSnapshot(layout, target, options.sha);
    if (output === null) {
      const write = options.write;
      if (!write) throw new Error('exportSnapshot needs an output file or a writer');
      const { manifest } = await reconstructSnapshot(layout, snapshot.sha256, (chunk) => write(chunk), env);
      return { snapshot, output: null, bytes: manifest.bytes, source_sha256: manifest.source_sha256 };
    }
    const written = await writeNewPrivateCopy(layout, snapshot.sha256, output, options.output!, env);
    return { snapshot, output, ...written };
  });
}

/**
 * The snapshot's bytes under a hidden name beside `absolute`, read back and checked against the
 * manifest on the way, then linked into place: an interrupted or failed export leaves no file under
 * the name a rerun would refuse. Private, as the vault keeps it: a transcript is the user's alone.
 */
async function writeNewPrivateCopy(layout: VaultLayout, sha: string, absolute: string, path: string, env: NodeJS.ProcessEnv): Promise<{ bytes: number; source_sha256: string }> {
  const temp = tempNameBeside(absolute);
  // Noted before the open, which a stop signal can follow: a stopped export leaves no hidden copy either.
  const forget = removeOnExit(temp);
  try {
    await (await open(temp, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY | constants.O_NOFOLLOW, PRIVATE_FILE_MODE)).close();
    faultPoint('export.after_create', undefined, env);
    const restored = await restoreSnapshotToStaging(layout, sha, temp, { env });
    linkIntoPlace(temp, absolute, path, () => copyFileSync(temp, absolute, constants.COPYFILE_EXCL));
    return { bytes: restored.bytes, source_sha256: restored.sourceSha256 };
  } finally {
    rmSync(temp, { force: true });
    forget();
  }
}
