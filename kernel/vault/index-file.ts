/**
 * `vault/index.jsonl`: the append-only ledger of archived states. Its line order is the recency
 * order. One bad line makes every read and write fail with "repair required", because a history
 * that skipped it would look complete while it is not.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { constants as fsConstants } from 'node:fs';
import { open } from 'node:fs/promises';
import { isAbsolute } from 'node:path';
import { validateVaultEntry } from '../../schemas/generated/validators.js';
import type { VaultEntry } from '../../schemas/generated/types.js';
import { GobstopperError } from '../errors.js';
import { shellWord } from '../text/shell-word.js';
import { insecureVault, vaultDamaged } from './errors.js';
import type { VaultLayout } from './layout.js';
import { MAX_INDEX_BYTES, MAX_INDEX_LINE_BYTES, MAX_PATH_BYTES, MAX_SESSION_ID_BYTES } from './limits.js';
import { withLock } from './lock.js';
import { checkPrivateFile, FileTooLargeError, fsyncDir, readPrivateFile, replacePrivateFile } from './private-fs.js';

export type { VaultEntry };

const INDEX_LOCK_WAIT_MS = 60_000;
const ENTRY_KEYS = ['ts', 'sha256', 'path', 'session_id', 'provider', 'bytes', 'record_count', 'strategy', 'source_sha256'] as const;

/** Why an entry is invalid, or null when it is valid. */
export function entryProblem(value: unknown): string | null {
  if (!validateVaultEntry(value)) {
    const first = validateVaultEntry.errors?.[0];
    return first ? `${first.instancePath || 'entry'} ${first.message ?? 'is invalid'}` : 'does not match the index entry schema';
  }
  const entry = value as VaultEntry;
  if (Buffer.byteLength(entry.session_id) > MAX_SESSION_ID_BYTES) return `session_id is longer than ${MAX_SESSION_ID_BYTES} bytes`;
  if (!isAbsolute(entry.path) || Buffer.byteLength(entry.path) > MAX_PATH_BYTES || entry.path.includes('\0')) return 'path is not an absolute path';
  if (entry.record_count > entry.bytes) return 'record_count is larger than bytes';
  return null;
}

/** The canonical line for an entry: fixed field order, so equal entries serialise identically. */
export function serializeEntry(entry: VaultEntry): string {
  const ordered: Record<string, unknown> = {};
  for (const key of ENTRY_KEYS) ordered[key] = entry[key];
  return JSON.stringify(ordered) + '\n';
}

function repairHint(file: string): string {
  return `fix or delete the named line in ${file} (snapshots stay in manifests/; only the history line is lost, and undo <snapshot-id> writes it back when a receipt names that snapshot)`;
}

/**
 * Appends stop at the limit (vault_full says to prune first), so an index past it was written by
 * something else; prune reads the index through the same limit and cannot trim it.
 */
function oversizedIndex(file: string, size: number): Error {
  return vaultDamaged(file, `index is ${size} bytes, over the ${MAX_INDEX_BYTES}-byte limit`, `gobstopper never writes an index this large: restore ${file} from a backup, or delete its oldest lines until it is under the limit (snapshots stay in manifests/; only those history lines are lost)`);
}

/** Parses and validates the whole index text. */
export function parseIndex(file: string, data: Buffer): VaultEntry[] {
  if (data.length === 0) return [];
  if (data[data.length - 1] !== 0x0a) throw unterminatedIndex(file, data);
  const entries: VaultEntry[] = [];
  let start = 0;
  let lineNo = 0;
  while (start < data.length) {
    const nl = data.indexOf(0x0a, start);
    const line = data.subarray(start, nl);
    lineNo += 1;
    start = nl + 1;
    if (line.length + 1 > MAX_INDEX_LINE_BYTES) throw vaultDamaged(file, `line ${lineNo} is longer than ${MAX_INDEX_LINE_BYTES} bytes`, repairHint(file));
    let value: unknown;
    try {
      value = JSON.parse(line.toString('utf8'));
    } catch {
      throw vaultDamaged(file, `line ${lineNo} is not JSON`, repairHint(file));
    }
    const problem = entryProblem(value);
    if (problem) throw vaultDamaged(file, `line ${lineNo} is not a valid index entry (${problem})`, repairHint(file));
    entries.push(value as VaultEntry);
  }
  return entries;
}

/**
 * An index whose last line has no newline. When that line is a whole, valid entry (an editor that
 * drops the final newline, or an append cut just before it), deleting it would lose a history line
 * for nothing: the repair is the newline. Anything else is a torn append, and the line goes.
 */
function unterminatedIndex(file: string, data: Buffer): Error {
  const last = data.subarray(data.lastIndexOf(0x0a) + 1);
  let whole = false;
  if (last.length + 1 <= MAX_INDEX_LINE_BYTES) {
    try {
      whole = entryProblem(JSON.parse(last.toString('utf8'))) === null;
    } catch {
      whole = false;
    }
  }
  if (whole) return vaultDamaged(file, 'the last line is a whole entry without its newline', `add the newline at the end of the file (printf '\\n' >> ${shellWord(file)}); keep the line, it is a state's history`);
  return vaultDamaged(file, 'the last line is not terminated (a torn append)', `delete the unterminated last line of ${file} (snapshots stay in manifests/; only that history line is lost)`);
}

/** Pauses before reading an index again whose last line is not finished yet (ms). */
const UNFINISHED_APPEND_PAUSES_MS = [20, 60, 150];

async function readIndexBytes(layout: VaultLayout): Promise<Buffer | null> {
  try {
    return await readPrivateFile(layout.index, MAX_INDEX_BYTES);
  } catch (error) {
    if (error instanceof FileTooLargeError) {
      throw oversizedIndex(layout.index, error.size);
    }
    throw error;
  }
}

/**
 * Every entry in append order; empty when the vault has no index yet. Readers do not take the
 * index lock, so a read can meet an append while it is being written: an index whose last line is
 * unfinished is read again a few times before it is reported as a torn append.
 */
export async function readIndex(layout: VaultLayout): Promise<VaultEntry[]> {
  let data = await readIndexBytes(layout);
  for (const pause of UNFINISHED_APPEND_PAUSES_MS) {
    if (data === null || data.length === 0 || data[data.length - 1] === 0x0a) break;
    await sleep(pause);
    data = await readIndexBytes(layout);
  }
  return data === null ? [] : parseIndex(layout.index, data);
}

/** Runs `body` holding the index lock (exclusive across processes). */
export function withIndexLock<T>(layout: VaultLayout, body: () => Promise<T>): Promise<T> {
  return withLock(layout.indexLock, { waitMs: INDEX_LOCK_WAIT_MS, what: 'the vault index' }, body);
}

/**
 * Which line of the index already records `entry`, given the whole index: `entry` is then not
 * written again, and that line is what the append returns for it.
 */
type AlreadyRecorded = (existing: readonly VaultEntry[]) => (entry: VaultEntry) => VaultEntry | undefined;

/**
 * Appends entries under the index lock after validating the whole existing index and the capacity.
 * The write is fsynced, and the directory too when the index is new. An entry that repeats the
 * newest one of its stream (same provider, path and session; same snapshot and label) is not
 * written again: a snapshot of unchanged bytes, or an apply that failed after its snapshot and is
 * run again, would otherwise fill the stream with copies and push its older states out of prune's
 * keep window. Returns each entry as the index holds it (the earlier one for a repeat).
 */
export async function appendIndexEntries(layout: VaultLayout, entries: VaultEntry[]): Promise<VaultEntry[]> {
  return appendUnrecorded(layout, entries, (existing) => {
    const newest = new Map<string, VaultEntry>();
    for (const entry of existing) newest.set(streamOf(entry), entry);
    return (entry) => {
      const last = newest.get(streamOf(entry));
      return last !== undefined && last.sha256 === entry.sha256 && last.strategy === entry.strategy ? last : undefined;
    };
  });
}

/**
 * Appends the line of a state whose line was lost, as snapshot writes one, unless its stream has a
 * line naming that snapshot anywhere by now (another run put it back first, or the same bytes were
 * archived again since): one such line is enough for history to list the state. Returns the line
 * the index holds for it, and whether this call wrote it.
 */
export async function appendLostIndexEntry(layout: VaultLayout, entry: VaultEntry): Promise<{ entry: VaultEntry; written: boolean }> {
  const [recorded] = await appendUnrecorded(layout, [entry], (existing) => (lost) => existing.find((e) => streamOf(e) === streamOf(lost) && e.sha256 === lost.sha256));
  return { entry: recorded!, written: recorded === entry };
}

async function appendUnrecorded(layout: VaultLayout, entries: VaultEntry[], alreadyRecorded: AlreadyRecorded): Promise<VaultEntry[]> {
  for (const entry of entries) {
    const problem = entryProblem(entry);
    if (problem) throw new GobstopperError('invalid_entry', `refusing to index an invalid entry: ${problem}`);
    if (Buffer.byteLength(serializeEntry(entry)) > MAX_INDEX_LINE_BYTES) throw new GobstopperError('invalid_entry', `index entry is longer than ${MAX_INDEX_LINE_BYTES} bytes`);
  }
  return withIndexLock(layout, async () => {
    const existing = await readPrivateFile(layout.index, MAX_INDEX_BYTES).catch((error: unknown) => {
      if (error instanceof FileTooLargeError) throw oversizedIndex(layout.index, error.size);
      throw error;
    });
    const earlierLine = alreadyRecorded(existing ? parseIndex(layout.index, existing) : []);
    const recorded = entries.map((entry) => earlierLine(entry) ?? entry);
    const fresh = entries.filter((entry, i) => recorded[i] === entry);
    if (fresh.length === 0) return recorded;
    const payload = Buffer.from(fresh.map(serializeEntry).join(''), 'utf8');
    const size = existing?.length ?? 0;
    if (size + payload.length > MAX_INDEX_BYTES) {
      throw new GobstopperError('vault_full', `the vault index would grow past ${MAX_INDEX_BYTES} bytes; run gobstopper prune --apply first`);
    }
    const handle = await openForAppend(layout.index);
    try {
      checkPrivateFile(layout.index, await handle.stat());
      try {
        let offset = 0;
        while (offset < payload.length) offset += (await handle.write(payload, offset, payload.length - offset, null)).bytesWritten;
        await handle.sync();
      } catch (error) {
        // A torn line would fail every later read closed; put the index back as it was.
        await handle.truncate(size).catch(() => undefined);
        throw error;
      }
    } finally {
      await handle.close();
    }
    if (existing === null) await fsyncDir(layout.root);
    return recorded;
  });
}

/** Which archived states are the history of one file as one session. */
export function streamOf(entry: VaultEntry): string {
  return `${entry.provider}\0${entry.path}\0${entry.session_id}`;
}

async function openForAppend(path: string) {
  try {
    return await open(path, fsConstants.O_WRONLY | fsConstants.O_APPEND | fsConstants.O_CREAT | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK, 0o600);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP' || code === 'EMLINK') throw insecureVault(path, 'is a symbolic link', 'replace it with the real index file');
    throw error;
  }
}

/** Replaces the whole index atomically; the caller holds the index lock. */
export async function rewriteIndexLocked(layout: VaultLayout, entries: VaultEntry[]): Promise<void> {
  await replacePrivateFile(layout.index, Buffer.from(entries.map(serializeEntry).join(''), 'utf8'));
}
