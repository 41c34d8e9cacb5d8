import { lstatSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import type { PluginManifest } from '../../../schemas/generated/types.js';
import { gobstopperVersion } from '../package-root.js';
import { admissionKey, admissionStartNs, recallAdmission, rememberAdmission } from './admission-cache.js';
import { checkBundlePath, filePointer } from './bundle-path.js';
import { walkBundle } from './bundle-tree.js';
import { checkFileHash } from './file-hashes.js';
import { readManifest } from './manifest.js';
import { AdmissionError, BundleLimits, MANIFEST_FILE } from './rules.js';

/** A bundle that passed every admission rule at the moment it was checked. */
export interface AdmittedBundle {
  /** Real path of the bundle directory. */
  root: string;
  manifestPath: string;
  manifest: PluginManifest;
  /** SHA-256 of the manifest bytes: the trust pin. */
  manifestSha256: string;
  /** Declared files with their sizes, sorted by path. */
  files: { path: string; sha256: string; bytes: number }[];
  /** Sum of the declared files' sizes. */
  totalBytes: number;
}

export interface AdmitOptions {
  /** The gobstopper version engines.gobstopper must accept; defaults to the running one. */
  gobstopperVersion?: string;
  /** What a changed file's message goes on to say; defaults to re-pinning it (the author's case). */
  changedFileAdvice?: string;
}

/**
 * Admits a bundle: `target` is the bundle directory or its gobstopper-plugin.json. Never runs any
 * of the bundle's code. Throws an AdmissionError naming the bundle and the file or field at fault.
 * A bundle this process admitted before, with no file or directory of it changed since (by stat),
 * is not hashed again (admission-cache.ts).
 */
export function admitBundle(target: string, options: AdmitOptions = {}): AdmittedBundle {
  const offered = resolve(target);
  const rootGiven = locateRoot(offered);
  const root = realpathSync(rootGiven);
  const version = options.gobstopperVersion ?? gobstopperVersion();
  const key = admissionKey(root, version, options.changedFileAdvice);
  const earlier = recallAdmission(key);
  if (earlier) return earlier;
  const startedNs = admissionStartNs();
  const { admitted, directories } = admitAfresh(root, rootGiven, version, options.changedFileAdvice);
  rememberAdmission(key, admitted, directories, startedNs);
  return admitted;
}

/** Every rule checked and every declared file hashed; `bundle` is the path the messages name. */
function admitAfresh(root: string, bundle: string, version: string, changedFileAdvice: string | undefined): { admitted: AdmittedBundle; directories: string[] } {
  const manifestPath = join(root, MANIFEST_FILE);
  const { manifest, manifestSha256 } = readManifest(manifestPath, bundle, version);

  const declaredPaths = Object.keys(manifest.files).sort();
  for (const path of declaredPaths) checkBundlePath(path, bundle, filePointer(path));
  checkBundlePath(manifest.executable, bundle, '/executable');
  if (!Object.hasOwn(manifest.files, manifest.executable)) {
    throw new AdmissionError('executable_undeclared', `bundle ${bundle}: executable ${manifest.executable} is not listed in files`, {
      bundle,
      pointer: '/executable',
      file: manifest.executable,
    });
  }

  const declared = new Set(declaredPaths);
  const { files: found, directories } = walkBundle(root, declared, bundle);
  for (const path of declaredPaths) {
    if (!found.has(path)) {
      throw new AdmissionError('file_missing', `bundle ${bundle}: declared file ${path} is missing`, { bundle, file: path, pointer: filePointer(path) });
    }
  }
  let totalBytes = 0;
  for (const file of found.values()) totalBytes += file.size;
  if (totalBytes > BundleLimits.totalBytes) {
    throw new AdmissionError('bundle_too_large', `bundle ${bundle} holds ${totalBytes} bytes of files; the limit is ${BundleLimits.totalBytes}`, { bundle });
  }
  const files = declaredPaths.map((path) => {
    const sha256 = manifest.files[path]!;
    const bytes = found.get(path)!.size;
    checkFileHash(root, path, sha256, bytes, bundle, changedFileAdvice);
    return { path, sha256, bytes };
  });
  if (manifest.runtime === 'exec') checkExecutable(root, manifest.executable, bundle);
  return { admitted: { root, manifestPath, manifest, manifestSha256, files, totalBytes }, directories };
}

/** An `exec` bundle's executable is run as it is, so it must carry an execute bit. */
function checkExecutable(root: string, executable: string, bundle: string): void {
  const mode = statSync(join(root, executable)).mode;
  if ((mode & 0o111) === 0) {
    throw new AdmissionError('file_not_executable', `bundle ${bundle}: ${executable} is the executable of an exec bundle but has no execute permission (mode ${(mode & 0o777).toString(8).padStart(4, '0')}; chmod +x it)`, {
      bundle,
      file: executable,
      pointer: '/executable',
    });
  }
}

function locateRoot(offered: string): string {
  let stat;
  try {
    stat = lstatSync(offered);
  } catch {
    throw new AdmissionError('not_a_bundle', `${offered} is not a plugin bundle: no such file or directory`, { bundle: offered });
  }
  if (stat.isSymbolicLink()) {
    // A link to the bundle directory (e.g. a checkout elsewhere) is fine; links inside it are not.
    try {
      stat = statSync(offered);
    } catch {
      throw new AdmissionError('not_a_bundle', `${offered} is not a plugin bundle: a dangling link`, { bundle: offered });
    }
  }
  if (stat.isDirectory()) return offered;
  if (basename(offered) === MANIFEST_FILE) {
    if (stat.isFile()) return dirname(offered);
    // Said as the directory's manifest would be, and without opening it: a FIFO would block.
    const bundle = dirname(offered);
    throw new AdmissionError('not_a_bundle', `${bundle} is not a plugin bundle: ${MANIFEST_FILE} is not a regular file`, { bundle, file: MANIFEST_FILE });
  }
  if (!stat.isFile()) throw new AdmissionError('not_a_bundle', `${offered} is not a plugin bundle: it is neither a directory nor a regular file`, { bundle: offered });
  throw new AdmissionError('not_a_bundle', `${offered} is not a plugin bundle: give its directory or its ${MANIFEST_FILE}`, { bundle: offered });
}
