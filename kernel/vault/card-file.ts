/**
 * `cards/<manifest_sha256>.json`: the state cards of one snapshot, recorded when it was stored (or
 * by the first recall that read it whole) so that recall need not read it back. The file only ever
 * saves work: whatever is wrong with one (absent, unreadable, not what this module writes, another
 * snapshot's) makes its reader read the snapshot instead, and deleting it is always safe.
 */
import { join } from 'node:path';
import type { VaultCardFile } from '../../schemas/generated/types.js';
import { validateVaultCardFile } from '../../schemas/generated/validators.js';
import { MIB } from '../../sdk/limits.js';
import { GobstopperError } from '../errors.js';
import type { VaultLayout } from './layout.js';
import { checkPrivateDir, FileTooLargeError, namesIn, readPrivateFile, replacePrivateFile, type WriteAll } from './private-fs.js';

export type { VaultCardFile };
export type IndexedCard = VaultCardFile['cards'][number];

export const CARD_FILE_SCHEMA_VERSION = 1;
/** A snapshot's cards are a few KiB each; one holding so many that its file passes this is read instead. */
export const MAX_CARD_FILE_BYTES = 64 * MIB;

const CARD_FILE_NAME = /^([0-9a-f]{64})\.json$/;

export function cardFilePath(layout: VaultLayout, manifestSha256: string): string {
  return join(layout.cards, `${manifestSha256}.json`);
}

/** The snapshot id a card file's name gives, or null for any other name. */
export function cardFileManifest(name: string): string | null {
  return CARD_FILE_NAME.exec(name)?.[1] ?? null;
}

export function serializeCardFile(card: VaultCardFile): Buffer {
  return Buffer.from(JSON.stringify(card) + '\n', 'utf8');
}

/** What a card file's manifest must say for the file to describe it. */
export interface CardFileClaim {
  manifestSha256: string;
  sourceSha256?: string;
  bytes?: number;
}

/** A claim that names everything a card file records of its snapshot. */
export type FullCardFileClaim = Required<CardFileClaim>;

export function cardFileOf(claim: FullCardFileClaim, cards: IndexedCard[]): VaultCardFile {
  return { schema_version: CARD_FILE_SCHEMA_VERSION, manifest_sha256: claim.manifestSha256, source_sha256: claim.sourceSha256, bytes: claim.bytes, cards };
}

/**
 * The card file of `claim.manifestSha256`; null when there is none. Throws, with the reason, for a
 * file that cannot be trusted to describe that snapshot (its file-system errors included).
 */
export async function readCardFile(layout: VaultLayout, claim: CardFileClaim): Promise<VaultCardFile | null> {
  const file = cardFilePath(layout, claim.manifestSha256);
  let data: Buffer | null;
  try {
    data = await readPrivateFile(file, MAX_CARD_FILE_BYTES);
  } catch (error) {
    if (error instanceof FileTooLargeError) throw badCardFile(file, `is ${error.size} bytes, over the ${MAX_CARD_FILE_BYTES}-byte card-file limit`);
    throw error;
  }
  if (data === null) return null;
  let value: unknown;
  try {
    value = JSON.parse(data.toString('utf8'));
  } catch {
    throw badCardFile(file, 'is not JSON');
  }
  if (!validateVaultCardFile(value)) throw badCardFile(file, 'does not match the card-file schema');
  const card = value as VaultCardFile;
  if (card.manifest_sha256 !== claim.manifestSha256) throw badCardFile(file, `describes snapshot ${card.manifest_sha256.slice(0, 16)}, not the one its name gives`);
  if (claim.sourceSha256 !== undefined && card.source_sha256 !== claim.sourceSha256) throw badCardFile(file, 'does not have its manifest\'s source_sha256');
  if (claim.bytes !== undefined && card.bytes !== claim.bytes) throw badCardFile(file, `says ${card.bytes} bytes, its manifest ${claim.bytes}`);
  return card;
}

/** The card file of `manifestSha256` when it can be used as it is; null otherwise. */
export async function usableCardFile(layout: VaultLayout, claim: CardFileClaim): Promise<VaultCardFile | null> {
  return readCardFile(layout, claim).catch(() => null);
}

/**
 * Writes the card file atomically (private temp file, read back, renamed into place). Two writers
 * of the same snapshot write the same bytes, so whichever rename lands last changes nothing.
 */
export async function writeCardFile(layout: VaultLayout, card: VaultCardFile, writeAll?: WriteAll): Promise<void> {
  const data = serializeCardFile(card);
  // Too many cards to be worth a file: recall reads this snapshot as it reads one stored before card files.
  if (data.length > MAX_CARD_FILE_BYTES) return;
  await replacePrivateFile(cardFilePath(layout, card.manifest_sha256), data, writeAll);
}

/** The card files of snapshots other than `kept`: what is left of snapshots gone or going. */
export async function cardFilesOutside(layout: VaultLayout, kept: ReadonlySet<string>): Promise<string[]> {
  // Files are removed only from a private directory of ours, never through a link.
  if (!(await checkPrivateDir(layout.cards))) return [];
  return (await namesIn(layout.cards)).filter((name) => {
    const sha = cardFileManifest(name);
    return sha !== null && !kept.has(sha);
  });
}

function badCardFile(file: string, problem: string): GobstopperError {
  return new GobstopperError('card_file_damaged', `card file ${file} ${problem}; delete it (the next recall reads the snapshot instead and writes the card file again)`, { details: { file } });
}
