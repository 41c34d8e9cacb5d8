/**
 * Listing a folder of a client's session store while discovering sessions. Two things hide
 * sessions without an error of their own: a folder that cannot be listed (no permission), and an
 * entry whose name is not UTF-8, which a path passed as a JSON string cannot name (Node reads it
 * with U+FFFD in place of its bytes, and the mangled path opens nothing). Each is told to the
 * caller, so the user hears why a session is missing rather than finding nothing.
 */
import { isUtf8 } from 'node:buffer';
import { readdirSync, type Dirent } from 'node:fs';
import { join } from 'node:path';
import { unreadableReason } from './unreadable.js';

/** Said of an entry whose name is not valid UTF-8. */
export const NON_UTF8_NAME = 'its name is not valid UTF-8, so gobstopper cannot open it (rename it)';

/** Why a folder's sessions were not listed; its path ends in `/` so a folder reads as one. */
export const folderNotSearched = (why: string) => `folder not searched: ${why}`;

/**
 * `name` as readable text: valid UTF-8 as it is, every other byte as `\xNN`, so the user can find
 * the entry (`ls` shows such bytes the same way).
 */
export function escapeName(name: Buffer): string {
  let out = '';
  for (let i = 0; i < name.length; ) {
    const lead = name[i]!;
    const width = lead < 0x80 ? 1 : lead >= 0xc2 && lead <= 0xdf ? 2 : lead >= 0xe0 && lead <= 0xef ? 3 : lead >= 0xf0 && lead <= 0xf4 ? 4 : 0;
    const char = width > 0 ? name.subarray(i, i + width) : null;
    if (char && char.length === width && isUtf8(char)) {
      out += char.toString('utf8');
      i += width;
    } else {
      out += `\\x${lead.toString(16).padStart(2, '0')}`;
      i += 1;
    }
  }
  return out;
}

/**
 * The entries of `dir`, or none when it is not there. A folder that exists but cannot be listed,
 * and each sub-folder or `.jsonl` file in it whose name is not UTF-8, is passed to `onHidden` with
 * the reason. Such an entry is still returned under its mangled name: opening that fails as a
 * missing file would, which discovery passes over.
 */
export function listStoreDir(dir: string, onHidden: (path: string, reason: string) => void): Dirent[] {
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENOTDIR') onHidden(`${dir}/`, folderNotSearched(unreadableReason(error)));
    return [];
  }
  // Only a name read with a replacement character can be one that is not UTF-8: the second
  // listing, of raw names, is paid for by such folders alone.
  if (entries.some((e) => e.name.includes('\uFFFD'))) reportNonUtf8(dir, onHidden);
  return entries;
}

/** The longest path a discover result may carry; escaping can make one longer than any real path. */
const MAX_PATH_CHARS = 4000;

function clipPath(path: string): string {
  const half = MAX_PATH_CHARS / 2;
  return path.length <= MAX_PATH_CHARS ? path : `${path.slice(0, half)}…${path.slice(-half)}`;
}

function reportNonUtf8(dir: string, onHidden: (path: string, reason: string) => void): void {
  let raw: Dirent[];
  try {
    raw = readdirSync(dir, { withFileTypes: true, encoding: 'buffer' }) as unknown as Dirent[];
  } catch {
    return;
  }
  for (const e of raw) {
    const name = e.name as unknown as Buffer;
    if (isUtf8(name)) continue;
    const path = clipPath(join(dir, escapeName(name)));
    if (e.isDirectory()) onHidden(`${path}/`, folderNotSearched(NON_UTF8_NAME));
    else if (name.toString('latin1').endsWith('.jsonl')) onHidden(path, NON_UTF8_NAME);
  }
}
