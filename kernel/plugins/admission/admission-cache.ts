import { lstatSync, type BigIntStats } from 'node:fs';
import { join } from 'node:path';
import { LruMap } from '../../../sdk/lru-map.js';
import type { AdmittedBundle } from './admit.js';

/** One process uses the built-ins and a few installed or pinned bundles; more is a pathological config. */
const CAPACITY = 32;

/**
 * How long a path must have been left alone before its stat may stand for its bytes. Timestamps
 * advance in clock ticks (milliseconds), so a write in the same tick as an earlier one can leave
 * ctime where it was. The rule reads this machine's clock: a network server's clock running behind
 * it, or a write through a shared mapping that does not move ctime, is not covered (docs/design.md).
 */
const SETTLE_NS = 2_000_000_000n;

interface Remembered {
  admitted: AdmittedBundle;
  /** Absolute path → stat signature, for the root, every directory, the manifest and every declared file. */
  signatures: Map<string, string>;
}

const remembered = new LruMap<string, Remembered>(CAPACITY);

/**
 * Everything besides the bytes on disk that decides admission's answer. The advice only shapes a
 * refusal, which is never remembered, but two callers asking differently still get their own entry.
 */
export function admissionKey(root: string, gobstopperVersion: string, changedFileAdvice: string | undefined): string {
  return JSON.stringify([root, gobstopperVersion, changedFileAdvice ?? null]);
}

/** The earlier admission under `key`, when no path it signed has changed since; forgets it otherwise. */
export function recallAdmission(key: string): AdmittedBundle | undefined {
  const entry = remembered.get(key);
  if (!entry) return undefined;
  for (const [path, signature] of entry.signatures) {
    const stat = statOf(path);
    if (!stat || signatureOf(stat) !== signature) {
      remembered.delete(key);
      return undefined;
    }
  }
  return entry.admitted;
}

/** The wall clock in the nanoseconds stat reports, taken before admission reads anything. */
export function admissionStartNs(): bigint {
  return BigInt(Date.now()) * 1_000_000n;
}

/**
 * Remembers a successful admission with the signature of every path it looked at. A path changed
 * within SETTLE_NS of `startedNs` (or after it) may have changed while admission read it, or may
 * change again without its ctime moving, so such an admission is not remembered.
 */
export function rememberAdmission(key: string, admitted: AdmittedBundle, directories: readonly string[], startedNs: bigint): void {
  const paths = [
    admitted.root,
    ...directories.map((dir) => join(admitted.root, dir)),
    admitted.manifestPath,
    ...admitted.files.map((file) => join(admitted.root, file.path)),
  ];
  const signatures = new Map<string, string>();
  for (const path of paths) {
    const stat = statOf(path);
    if (!stat || stat.ctimeNs >= startedNs - SETTLE_NS) return;
    signatures.set(path, signatureOf(stat));
  }
  remembered.set(key, { admitted, signatures });
}

// lstat, like the walk: a link put in place of a file must change the signature, not sign its target.
function statOf(path: string): BigIntStats | undefined {
  try {
    return lstatSync(path, { bigint: true });
  } catch {
    return undefined;
  }
}

function signatureOf(stat: BigIntStats): string {
  return `${stat.dev}:${stat.ino}:${stat.size}:${stat.mtimeNs}:${stat.ctimeNs}`;
}
