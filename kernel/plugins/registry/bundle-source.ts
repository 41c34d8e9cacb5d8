import { chmodSync, createReadStream, existsSync, lstatSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { GobstopperError } from '../../errors.js';
import { removeOnExit } from '../../exit-cleanup.js';
import { createGunzip } from 'node:zlib';
import { AdmissionError, BundleLimits, MANIFEST_FILE } from '../admission/rules.js';
import { loadExeca } from '../../load-execa.js';

export type BundleSourceKind = 'directory' | 'tarball' | 'npm';

/** A bundle made available on local disk for admission; `cleanup` removes any temporary copy. */
export interface OpenedBundleSource {
  kind: BundleSourceKind;
  dir: string;
  /** What the user gave: the directory, the .tgz or the npm spec. */
  origin: string;
  cleanup(): void;
}

const TARBALL = /\.(tgz|tar\.gz)$/i;

/**
 * An admission refusal of an unpacked archive, told about the archive (the .tgz, or the npm spec)
 * instead of the temporary directory it was unpacked into, which is gone once the error is read.
 */
export function aboutArchive(source: OpenedBundleSource, error: unknown): unknown {
  if (source.kind === 'directory' || !(error instanceof AdmissionError)) return error;
  return new AdmissionError(error.code, error.message.split(source.dir).join(source.origin), { ...error.details, bundle: source.origin });
}

/**
 * An existing .tgz / .tar.gz file: a packed bundle. A link to one counts (`latest.tgz` naming a
 * release): the archive is only read, and what is in it is admitted like any other.
 */
export function isTarballFile(path: string): boolean {
  return TARBALL.test(path) && existsSync(path) && statSync(path).isFile();
}

/**
 * A directory (or its manifest) is used where it is; a .tgz is unpacked with tar into a temporary
 * directory; anything else that does not exist on disk is an npm package spec fetched with
 * `npm pack` (no install scripts run) and unpacked the same way.
 */
export async function openBundleSource(spec: string, cwd = process.cwd()): Promise<OpenedBundleSource> {
  const local = resolve(cwd, spec);
  if (existsSync(local)) {
    if (isTarballFile(local)) return unpack(local, 'tarball');
    const stat = lstatSync(local);
    if (stat.isFile() && basename(local) === MANIFEST_FILE) return { kind: 'directory', dir: resolve(local, '..'), origin: local, cleanup: () => {} };
    return { kind: 'directory', dir: local, origin: local, cleanup: () => {} };
  }
  if (looksLikePath(spec)) {
    throw new GobstopperError('not_a_bundle', `${local} is not a plugin bundle: no such file or directory`, { details: { bundle: local } });
  }
  return packFromNpm(spec, cwd);
}

function looksLikePath(spec: string): boolean {
  return spec.startsWith('.') || spec.startsWith('/') || spec.startsWith('~') || TARBALL.test(spec) || spec.endsWith(MANIFEST_FILE);
}

async function packFromNpm(spec: string, cwd: string): Promise<OpenedBundleSource> {
  const temp = mkdtempSync(join(tmpdir(), 'gobstopper-npm-'));
  // A fetch can take a while, and Ctrl-C is the way out of one: the temporary directory goes too.
  const forget = removeOnExit(temp);
  const removeTemp = () => {
    rmSync(temp, { recursive: true, force: true });
    forget();
  };
  try {
    // npm's debug log and its update check would otherwise land in the person's home, for a fetch
    // that failed too; they go to the temporary directory, removed with it.
    const execa = await loadExeca();
    const result = await execa('npm', ['pack', spec, '--json', '--ignore-scripts', '--pack-destination', temp, '--logs-dir', join(temp, 'npm-logs'), '--no-update-notifier'], {
      cwd,
      reject: false,
      timeout: 120_000,
      stdin: 'ignore',
    });
    if (result.exitCode !== 0) {
      const why = npmErrorLine(String(result.stderr)) ?? notRunWhy('npm pack', result);
      throw new GobstopperError('npm_pack_failed', `cannot fetch ${spec} from npm: ${why}`, { details: { spec } });
    }
    const packed = readdirSync(temp).find((f) => TARBALL.test(f));
    if (!packed) throw new GobstopperError('npm_pack_failed', `npm pack ${spec} produced no tarball`, { details: { spec } });
    const opened = await unpack(join(temp, packed), 'npm');
    return { ...opened, origin: spec, cleanup: () => { opened.cleanup(); removeTemp(); } };
  } catch (error) {
    removeTemp();
    throw error;
  }
}

/**
 * The line of npm's error report that says what went wrong: its first line is only the code
 * ("code E404"), the next says what ("404 Not Found - GET https://…").
 */
function npmErrorLine(stderr: string): string | null {
  const said = stderr
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.startsWith('npm error') || l.startsWith('npm ERR!'))
    .map((l) => l.replace(/^npm (error|ERR!)\s*/, ''))
    .filter((l) => l !== '');
  return said.find((l) => !/^code \S+$/.test(l) && !/^\d+$/.test(l)) ?? said[0] ?? null;
}

/**
 * Why a tool run ended without an exit status of its own, for the error message: execa leaves
 * exitCode undefined when the program could not be started or was stopped, which printed as
 * "exited with undefined".
 */
function notRunWhy(what: string, result: { exitCode?: number; timedOut?: boolean; signal?: string; code?: string }): string {
  const program = what.split(' ')[0]!;
  if (result.code === 'ENOENT') return `${program} is not on PATH`;
  if (result.timedOut) return `${what} did not finish within 120 s and was stopped`;
  if (result.signal) return `${what} was stopped by ${result.signal}`;
  if (result.exitCode === undefined) return `${program} could not be started${result.code ? ` (${result.code})` : ''}`;
  return `${what} exited with ${result.exitCode}`;
}

/**
 * The most a tar stream of an admissible bundle can hold: its files and manifest, a header and
 * padding per entry, and the end-of-archive record. Anything larger is refused before a byte of it
 * is written to disk, so a small archive cannot unpack into a disk-filling one.
 */
const MAX_TAR_BYTES = BundleLimits.totalBytes + BundleLimits.manifestBytes + BundleLimits.directoryEntries * 1024 + 10 * 1024;

/** Whether `tarball` decompresses to at most `cap` bytes; stops reading as soon as it does not. */
async function decompressesWithin(tarball: string, cap: number): Promise<boolean> {
  let total = 0;
  const stream = createReadStream(tarball).pipe(createGunzip());
  try {
    for await (const chunk of stream) {
      total += (chunk as Buffer).length;
      if (total > cap) return false;
    }
    return true;
  } catch {
    // Not gzip, or corrupt: tar reports it, in its own words, below.
    return true;
  } finally {
    stream.destroy();
  }
}

async function unpack(tarball: string, kind: BundleSourceKind): Promise<OpenedBundleSource> {
  if (!(await decompressesWithin(tarball, MAX_TAR_BYTES))) {
    throw new GobstopperError('bundle_too_large', `${tarball} unpacks to more than a plugin bundle may hold (${BundleLimits.totalBytes} bytes of files); nothing was unpacked`, { details: { bundle: tarball } });
  }
  const dir = mkdtempSync(join(tmpdir(), 'gobstopper-bundle-'));
  const forget = removeOnExit(dir);
  const cleanup = () => {
    ownerAccessible(dir);
    rmSync(dir, { recursive: true, force: true });
    forget();
  };
  try {
    // GNU tar refuses members with absolute or ".." names by default; admission then refuses links.
    // In the C locale tar's reasons are the English the rest of the message is in, and the notes
    // tarErrorLine leaves out are recognised.
    const execa = await loadExeca();
    const result = await execa('tar', ['-xzf', tarball, '-C', dir, '--no-same-owner', '--no-same-permissions'], { reject: false, timeout: 120_000, stdin: 'ignore', env: { LC_ALL: 'C' } });
    // A tar that never ran says nothing about the archive: naming the archive would send people
    // looking for a fault in it.
    if (result.exitCode === undefined && !result.timedOut && !result.signal) {
      throw new GobstopperError('runtime_missing', `cannot unpack ${tarball}: ${notRunWhy('tar', result)}`, { details: { bundle: tarball, runtime: 'tar' } });
    }
    if (result.exitCode !== 0) {
      const why = tarErrorLine(String(result.stderr));
      throw new GobstopperError('not_a_bundle', `${tarball} is not a plugin bundle: tar could not unpack it${why ? ` (${why})` : ''}`, { details: { bundle: tarball } });
    }
    ownerAccessible(dir);
    return { kind, dir: bundleDirIn(dir, tarball), origin: tarball, cleanup };
  } catch (error) {
    cleanup();
    throw error;
  }
}

/**
 * What tar said was wrong with the archive ("../x: Member name contains '..'", "gzip: stdin: not in
 * gzip format"), without its notes about names it rewrote and its closing summary.
 */
function tarErrorLine(stderr: string): string | null {
  const noise = /^tar: (Removing leading|Exiting with failure status|Child returned status|Error is not recoverable)/;
  const line = stderr
    .split('\n')
    .map((l) => l.trim())
    .find((l) => l !== '' && !noise.test(l));
  return line === undefined ? null : line.replace(/^tar: /, '').slice(0, 200);
}

/** The bundle is the archive's top level, or its single top-level directory (npm packs into package/). */
function bundleDirIn(dir: string, tarball: string): string {
  if (existsSync(join(dir, MANIFEST_FILE))) return dir;
  const entries = readdirSync(dir);
  if (entries.length === 1 && lstatSync(join(dir, entries[0]!)).isDirectory() && existsSync(join(dir, entries[0]!, MANIFEST_FILE))) {
    return join(dir, entries[0]!);
  }
  throw new GobstopperError('not_a_bundle', `${tarball} is not a plugin bundle: it has no ${MANIFEST_FILE} at its top level`, { details: { bundle: tarball } });
}

/**
 * The modes an archive gives its members are not the bundle's to decide (the installed copy gets
 * 0644 or 0755 either way), but a member directory or file of mode 000 made the unpacked copy
 * unreadable to admission and impossible to remove, leaving it in the temporary directory: the
 * owner gets read and write on everything unpacked, and search on its directories. Links are left
 * as they are (admission refuses them).
 */
function ownerAccessible(root: string): void {
  const pending = [root];
  while (pending.length > 0) {
    const path = pending.pop()!;
    let stat;
    try {
      stat = lstatSync(path);
    } catch {
      continue;
    }
    if (stat.isSymbolicLink()) continue;
    const wanted = stat.mode | (stat.isDirectory() ? 0o700 : 0o600);
    if ((stat.mode & 0o7777) !== (wanted & 0o7777)) chmodSync(path, wanted & 0o7777);
    if (stat.isDirectory()) for (const name of readdirSync(path)) pending.push(join(path, name));
  }
}
