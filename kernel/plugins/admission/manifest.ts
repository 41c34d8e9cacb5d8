import { createHash } from 'node:crypto';
import { closeSync, constants, fstatSync, lstatSync, openSync, readSync } from 'node:fs';
import type { ErrorObject } from 'ajv';
import semver from 'semver';
import type { PluginManifest } from '../../../schemas/generated/types.js';
import { validatePluginManifest } from '../../../schemas/generated/validators.js';
import { printableText } from '../../text/human.js';
import { jsonProblemAt } from '../../text/json-problem.js';
import { firstDuplicateKey } from './duplicate-keys.js';
import { AdmissionError, BundleLimits, MANIFEST_FILE } from './rules.js';
import { mostSpecific } from '../protocol/schema-check.js';

export interface ReadManifest {
  manifest: PluginManifest;
  /** SHA-256 of the manifest bytes exactly as stored: the trust pin. */
  manifestSha256: string;
  bytes: number;
}

/**
 * Reads, size-checks, parses and validates a manifest: the schema (unknown fields rejected) plus
 * what a schema cannot say (semver version, a satisfiable engines range).
 */
export function readManifest(manifestPath: string, bundle: string, runningVersion: string): ReadManifest {
  const buffer = readManifestBytes(manifestPath, bundle);
  const manifestSha256 = createHash('sha256').update(buffer).digest('hex');
  let value: unknown;
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(buffer);
    value = JSON.parse(text);
  } catch (error) {
    // The parser's own words carry the position ("... in JSON at position 212"); the manifest is the
    // author's text, so quoting around it is fine. Not UTF-8 is said as such.
    const why = error instanceof SyntaxError ? `: ${jsonProblemAt(text!, error.message)}` : ' (it is not UTF-8)';
    throw new AdmissionError('manifest_not_json', `bundle ${bundle}: ${MANIFEST_FILE} is not valid JSON${why}`, { bundle, file: MANIFEST_FILE });
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    throw new AdmissionError('manifest_not_json', `bundle ${bundle}: ${MANIFEST_FILE} is not a JSON object`, { bundle, file: MANIFEST_FILE });
  }
  refuseDuplicateKey(text, bundle);
  if (!validatePluginManifest(value)) throw schemaError(validatePluginManifest.errors ?? [], bundle, (value as { version?: unknown }).version);
  const manifest = value as PluginManifest;
  checkId(manifest, bundle);
  checkProvides(manifest, bundle);
  checkVersion(manifest, bundle);
  checkEngines(manifest, bundle, runningVersion);
  return { manifest, manifestSha256, bytes: buffer.length };
}

/** Refused before the schema looks at the value, which holds only the last of the repeated members. */
function refuseDuplicateKey(text: string, bundle: string): void {
  const duplicate = firstDuplicateKey(text);
  if (!duplicate) return;
  const { key, pointer } = duplicate;
  throw new AdmissionError(
    'manifest_duplicate_key',
    `bundle ${bundle}: ${MANIFEST_FILE} has the key ${JSON.stringify(key)} twice at ${printableText(pointer)}; JSON parsers disagree on which one counts, so keep one`,
    { bundle, pointer, file: MANIFEST_FILE, key },
  );
}

function readManifestBytes(manifestPath: string, bundle: string): Buffer {
  let stat;
  try {
    stat = lstatSync(manifestPath);
  } catch {
    throw new AdmissionError('not_a_bundle', `${bundle} is not a plugin bundle: it has no ${MANIFEST_FILE}`, { bundle });
  }
  if (stat.isSymbolicLink()) {
    throw new AdmissionError('symlink_refused', `bundle ${bundle}: ${MANIFEST_FILE} is a symbolic link; bundles may not contain links`, { bundle, file: MANIFEST_FILE });
  }
  if (!stat.isFile()) {
    throw new AdmissionError('not_a_bundle', `${bundle} is not a plugin bundle: ${MANIFEST_FILE} is not a regular file`, { bundle, file: MANIFEST_FILE });
  }
  const tooLarge = () =>
    new AdmissionError('manifest_too_large', `bundle ${bundle}: ${MANIFEST_FILE} is larger than ${BundleLimits.manifestBytes} bytes`, { bundle, file: MANIFEST_FILE });
  if (stat.size > BundleLimits.manifestBytes) throw tooLarge();
  const fd = openSync(manifestPath, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    if (!fstatSync(fd).isFile()) throw new AdmissionError('not_a_bundle', `${bundle}: ${MANIFEST_FILE} is not a regular file`, { bundle, file: MANIFEST_FILE });
    // Read one byte past the cap so a file that grew after lstat is still caught.
    const buffer = Buffer.alloc(BundleLimits.manifestBytes + 1);
    let length = 0;
    for (;;) {
      const n = readSync(fd, buffer, length, buffer.length - length, null);
      if (n === 0) break;
      length += n;
      if (length > BundleLimits.manifestBytes) throw tooLarge();
    }
    return buffer.subarray(0, length);
  } finally {
    closeSync(fd);
  }
}

/** Turns the validator's errors into the single most useful refusal, with a JSON pointer. */
function schemaError(errors: ErrorObject[], bundle: string, version: unknown): AdmissionError {
  const unknown = errors.find((e) => e.keyword === 'additionalProperties');
  if (unknown) {
    const field = String((unknown.params as { additionalProperty?: unknown }).additionalProperty);
    const pointer = `${unknown.instancePath}/${field.replace(/~/g, '~0').replace(/\//g, '~1')}`;
    return new AdmissionError('manifest_unknown_field', `bundle ${bundle}: ${MANIFEST_FILE} has an unknown field at ${pointer}`, { bundle, pointer, file: MANIFEST_FILE });
  }
  const protocol = errors.find((e) => e.instancePath === '/protocol_version');
  if (protocol) {
    return new AdmissionError('protocol_unsupported', `bundle ${bundle}: protocol_version must be 1, the only plugin protocol this gobstopper speaks`, {
      bundle,
      pointer: '/protocol_version',
      file: MANIFEST_FILE,
    });
  }
  const fileCount = errors.find((e) => e.instancePath === '/files' && e.keyword === 'maxProperties');
  if (fileCount) {
    return new AdmissionError('too_many_files', `bundle ${bundle}: files lists more than 64 files`, { bundle, pointer: '/files', file: MANIFEST_FILE });
  }
  // A version too short or too long for the schema is still a bad version, named as one.
  if (errors.some((e) => e.instancePath === '/version')) {
    return badVersion(bundle, `${JSON.stringify(typeof version === 'string' ? version.slice(0, 64) : version)} is not a semantic version (like 1.2.3)`);
  }
  const { pointer, message } = mostSpecific(errors);
  const where = pointer === '' ? 'the top level' : pointer;
  return new AdmissionError('manifest_invalid', `bundle ${bundle}: ${MANIFEST_FILE} is invalid at ${where}: ${message}`, {
    bundle,
    pointer,
    file: MANIFEST_FILE,
  });
}

/**
 * The id names the install directory (`plugins/<id>/<version>/`): `.` and `..` would put the bundle
 * outside it, and any id starting with `.` reads as a path on the command line, so none is an id.
 */
function checkId(manifest: PluginManifest, bundle: string): void {
  if (!manifest.id.startsWith('.')) return;
  throw new AdmissionError('manifest_invalid', `bundle ${bundle}: ${MANIFEST_FILE} is invalid at /id: ${JSON.stringify(manifest.id)} starts with "."; an id may not`, {
    bundle,
    pointer: '/id',
    file: MANIFEST_FILE,
  });
}

/**
 * Ids are how the host finds a bundle to start: one that lists none is never run, so installing it
 * would only look like success. The schema lets every list be left out or empty.
 */
function checkProvides(manifest: PluginManifest, bundle: string): void {
  const { providers = [], strategies = [], scorers = [] } = manifest.provides;
  if (providers.length + strategies.length + scorers.length > 0) return;
  throw new AdmissionError(
    'manifest_provides_nothing',
    `bundle ${bundle}: ${MANIFEST_FILE} provides nothing at /provides; list at least one id under providers, strategies or scorers, since a bundle that serves no id is never run`,
    { bundle, pointer: '/provides', file: MANIFEST_FILE },
  );
}

function checkVersion(manifest: PluginManifest, bundle: string): void {
  const version = manifest.version;
  if (semver.valid(version) === version) return;
  // Build metadata does not order versions, so two installed versions could not be told apart.
  const parsed = semver.parse(version);
  const build = parsed !== null && parsed.build.length > 0 && `${parsed.version}+${parsed.build.join('.')}` === version;
  throw badVersion(bundle, build ? `"${version}" carries build metadata, which does not order versions; drop the +${parsed.build.join('.')}` : `"${version.slice(0, 64)}" is not a semantic version (like 1.2.3)`);
}

function badVersion(bundle: string, why: string): AdmissionError {
  return new AdmissionError('manifest_bad_semver', `bundle ${bundle}: version ${why}`, { bundle, pointer: '/version', file: MANIFEST_FILE });
}

function checkEngines(manifest: PluginManifest, bundle: string, runningVersion: string): void {
  const range = manifest.engines.gobstopper;
  if (semver.validRange(range) === null) {
    throw new AdmissionError('engines_bad_range', `bundle ${bundle}: engines.gobstopper "${range}" is not a semver range`, {
      bundle,
      pointer: '/engines/gobstopper',
      file: MANIFEST_FILE,
    });
  }
  if (!semver.satisfies(runningVersion, range, { includePrerelease: true })) {
    throw new AdmissionError('engines_unsatisfied', `bundle ${bundle}: needs gobstopper ${range}, this is ${runningVersion}`, {
      bundle,
      pointer: '/engines/gobstopper',
      file: MANIFEST_FILE,
    });
  }
}
