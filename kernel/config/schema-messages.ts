/**
 * Turns a schema failure on a config file into one sentence a person can act on, naming the TOML
 * table and key: "unknown key 'trigger' in [provider.codex] (did you mean 'trigger_tokens'?)".
 */
import type { ErrorObject } from 'ajv';
import { WHOLE_NUMBER_RANGES, type WholeNumberKey } from '../policy/bounds.js';
import { nearestTableKey } from './table-keys.js';

const BARE_KEY = /^[A-Za-z0-9_-]+$/;

export function tableName(segments: readonly string[]): string {
  // Session ids are always quoted, as the docs and help write [sessions."<id>"], whether or not
  // the id would pass as a bare key.
  return `[${segments.map((s, i) => (BARE_KEY.test(s) && !(i === 1 && segments[0] === 'sessions') ? s : JSON.stringify(s))).join('.')}]`;
}

function where(segments: readonly string[]): string {
  return segments.length === 0 ? 'at the top level' : `in ${tableName(segments)}`;
}

function pointerSegments(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function valueAt(data: unknown, segments: readonly string[]): unknown {
  let node = data;
  for (const s of segments) {
    if (node === null || typeof node !== 'object' || !Object.hasOwn(node, s)) return undefined;
    node = (node as Record<string, unknown>)[s];
  }
  return node;
}

/** The table and key a JSON pointer into a config file names, for an error's details. */
export function placeAt(pointer: string): ConfigPlace {
  const segments = pointerSegments(pointer);
  return placeOf(segments.slice(0, -1), segments[segments.length - 1] ?? null);
}

/** "'trigger_tokens' in [policy]", for a JSON pointer into a config file. */
export function describeAt(pointer: string): string {
  const segments = pointerSegments(pointer);
  return `'${segments[segments.length - 1] ?? ''}' ${where(segments.slice(0, -1))}`;
}

/** How the file wrote a value the parsed data no longer shows: a whole float (8.0) or a date (1979-05-27). */
type Written = 'float' | 'date' | null;

/** A number the file wrote as a float reads as one even when it is whole: 8.0, not 8; a date reads as a date, not a string. */
function describeValue(value: unknown, written: Written = null): string {
  const writtenAsFloat = written === 'float';
  if (value === null) return 'null';
  if (written === 'date' && typeof value === 'string') return `the date/time ${value}`;
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'a table';
  if (typeof value === 'string') return `a string ${JSON.stringify(value.length > 40 ? value.slice(0, 40) + '…' : value)}`;
  if (typeof value === 'number') {
    if (Number.isNaN(value)) return 'nan';
    if (!Number.isFinite(value)) return value > 0 ? 'inf' : '-inf';
    if (!Number.isInteger(value)) return `the float ${value}`;
    return writtenAsFloat ? `the float ${Number.isSafeInteger(value) ? `${value}.0` : value}` : `the integer ${value}`;
  }
  if (typeof value === 'boolean') return `the boolean ${value}`;
  return typeof value;
}

const EXPECTED: Record<string, string> = {
  integer: 'a whole number',
  number: 'a number',
  string: 'a string',
  boolean: 'true or false',
  object: 'a table',
  array: 'an array',
};

/** Every table the config schema takes at the top level ([rollout] is read for compatibility only). */
const TOP_LEVEL_TABLES = '[policy], [provider.<claude_code|codex|devin>], [presets.<name>], [sessions."<id>"], [discovery] or [rollout]';

function firstError(errors: readonly ErrorObject[]): ErrorObject | undefined {
  return errors.find((e) => e.keyword !== 'propertyNames' && e.keyword !== 'anyOf' && e.keyword !== 'oneOf') ?? errors[0];
}

/** The table and key of a config problem, for the details of a --json error. */
export interface ConfigPlace {
  /** "[policy]"; null at the top level. */
  table: string | null;
  key: string | null;
}

export function placeOf(segments: readonly string[], key: string | null): ConfigPlace {
  return { table: segments.length === 0 ? null : tableName(segments), key };
}

/** Where the problem describeSchemaError names lies. */
export function schemaErrorPlace(errors: readonly ErrorObject[]): ConfigPlace {
  const error = firstError(errors);
  if (!error) return { table: null, key: null };
  const segments = pointerSegments(error.instancePath);
  const nameError = (error as ErrorObject & { propertyName?: string }).propertyName;
  if (nameError !== undefined) return placeOf(segments, nameError);
  if (error.keyword === 'additionalProperties') return placeOf(segments, String(error.params.additionalProperty));
  if (error.keyword === 'required') return placeOf(segments, String(error.params.missingProperty));
  return placeOf(segments.slice(0, -1), segments[segments.length - 1] ?? null);
}

/**
 * The first problem, as one line. Key-level problems win over the wrappers ajv adds around them.
 * `floats` holds the pointers of numbers the file wrote as floats, `dates` those of its dates and times.
 */
export function describeSchemaError(errors: readonly ErrorObject[], data: unknown, floats: ReadonlySet<string> = new Set(), dates: ReadonlySet<string> = new Set()): string {
  const error = firstError(errors);
  if (!error) return 'is not a valid configuration';
  const segments = pointerSegments(error.instancePath);
  const nameError = (error as ErrorObject & { propertyName?: string }).propertyName;
  if (nameError !== undefined) {
    const table = tableName(segments);
    if (segments[0] === 'presets') return `invalid preset name ${JSON.stringify(nameError)} in ${table}: use 1-64 letters, digits, '_', '.' or '-'`;
    if (segments[0] === 'sessions') return `invalid session id ${JSON.stringify(nameError)} in ${table}: use 1-256 characters`;
    return `invalid name ${JSON.stringify(nameError)} in ${table}`;
  }
  const parent = segments.slice(0, -1);
  const key = segments[segments.length - 1];
  const value = valueAt(data, segments);
  const written: Written = floats.has(error.instancePath) ? 'float' : dates.has(error.instancePath) ? 'date' : null;
  switch (error.keyword) {
    case 'additionalProperties': {
      const unknown = String(error.params.additionalProperty);
      if (segments.length === 0) return `unknown key '${unknown}' at the top level (expected ${TOP_LEVEL_TABLES})`;
      if (segments.length === 1 && segments[0] === 'provider') return `unknown key '${unknown}' in [provider]: providers are claude_code, codex and devin`;
      const meant = nearestTableKey(segments, unknown);
      return `unknown key '${unknown}' ${where(segments)}${meant ? ` (did you mean '${meant}'?)` : ''}`;
    }
    case 'required':
      return `missing key '${String(error.params.missingProperty)}' ${where(segments)}`;
    case 'type': {
      const expected = EXPECTED[String(error.params.type)] ?? String(error.params.type);
      if (key === 'keep_score_threshold' && typeof value === 'number') {
        return `keep_score_threshold must be a finite value between 0 and 1 ${where(parent)} (got ${describeValue(value, written)})`;
      }
      return `wrong type for '${key}' ${where(parent)}: expected ${expected}, got ${describeValue(value, written)}`;
    }
    case 'enum':
      return `'${key}' ${where(parent)} must be one of ${(error.params.allowedValues as unknown[]).join(', ')} (got ${describeValue(value, written)})`;
    case 'minimum':
    case 'maximum': {
      // A policy key with a range says the whole range, as a value past its other end does.
      const range = Object.hasOwn(WHOLE_NUMBER_RANGES, key) ? WHOLE_NUMBER_RANGES[key as WholeNumberKey] : null;
      if (range) return `'${key}' ${where(parent)} must be a whole number from ${range.min} to ${range.max} (got ${describeValue(value, written)})`;
      return `'${key}' ${where(parent)} must be ${error.keyword === 'minimum' ? 'at least' : 'at most'} ${String(error.params.limit)} (got ${describeValue(value, written)})`;
    }
    case 'minLength':
      return `'${key}' ${where(parent)} must not be empty`;
    case 'maxLength':
      return `'${key}' ${where(parent)} is longer than ${String(error.params.limit)} characters`;
    case 'pattern':
      if (key === 'trusted_sha256') return `'trusted_sha256' ${where(parent)} must be 64 lowercase hex digits`;
      if (key === 'strategy' || key === 'scorer') return `'${key}' ${where(parent)} must be an id of 1-128 letters, digits, '_', '.' or '-' (got ${describeValue(value, written)})`;
      return `'${key}' ${where(parent)} does not match ${String(error.params.pattern)}`;
    default:
      return `'${key ?? ''}' ${where(parent)} ${error.message ?? 'is invalid'}`;
  }
}
