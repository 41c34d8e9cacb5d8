import { GobstopperError } from '../../errors.js';

/** The name every bundle's manifest has, at the bundle root. */
export const MANIFEST_FILE = 'gobstopper-plugin.json';

/** Bundle limits (the original's, reference/gobstopper-design.md §6). */
export const BundleLimits = {
  manifestBytes: 64 * 1024,
  files: 64,
  directoryEntries: 256,
  depth: 8,
  totalBytes: 16 * 1024 * 1024,
} as const;

/**
 * Every way admission can refuse a bundle. Each code has a fixture bundle under
 * test/fixtures/bundles/admission/ (or one built by the admission test) that fails with exactly it.
 */
export const AdmissionCodes = [
  'not_a_bundle',
  'manifest_too_large',
  'manifest_not_json',
  'manifest_duplicate_key',
  'manifest_unknown_field',
  'manifest_invalid',
  'manifest_provides_nothing',
  'protocol_unsupported',
  'too_many_files',
  'manifest_bad_semver',
  'engines_bad_range',
  'engines_unsatisfied',
  'path_invalid',
  'path_escape',
  'executable_undeclared',
  'symlink_refused',
  'file_not_regular',
  'too_many_entries',
  'too_deep',
  'file_undeclared',
  'file_missing',
  'bundle_too_large',
  'file_hash_mismatch',
  'file_not_executable',
] as const;

export type AdmissionCode = (typeof AdmissionCodes)[number];

export interface AdmissionErrorDetails {
  /** The bundle root (or the path that was offered as one). */
  bundle: string;
  /** JSON pointer into the manifest, when the problem is a manifest field. */
  pointer?: string;
  /** Bundle-relative path of the file at fault. */
  file?: string;
  /** The member name a manifest object repeats (manifest_duplicate_key). */
  key?: string;
}

/** An admission refusal: a stable code, a sentence naming the bundle and the file or field. */
export class AdmissionError extends GobstopperError {
  declare readonly code: AdmissionCode;
  declare readonly details: AdmissionErrorDetails & Record<string, unknown>;

  constructor(code: AdmissionCode, message: string, details: AdmissionErrorDetails) {
    super(code, message, { exit: 1, details: { ...details } });
    this.name = 'AdmissionError';
  }
}

/** RFC 6901 escaping of one reference token. */
export function pointerToken(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}
