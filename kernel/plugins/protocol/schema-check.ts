import type { ErrorObject } from 'ajv';
import * as generated from '../../../schemas/generated/validators.js';
import type { GeneratedValidator } from '../../../schemas/generated/validators.js';
import { MethodSchemas } from '../../../sdk/protocol.js';

export interface SchemaViolation {
  pointer: string;
  message: string;
}

const validators = generated as unknown as Record<string, GeneratedValidator | undefined>;

/** The generated validator of a schema $def. */
export function validatorFor(defName: string): GeneratedValidator {
  const validator = validators[`validate${defName}`];
  if (!validator) throw new Error(`no generated validator for $def ${defName}`);
  return validator;
}

/** Validators of a method's params and result, or null where the method carries none. */
export function methodValidators(method: string): { params: GeneratedValidator | null; result: GeneratedValidator | null } | undefined {
  const schemas = MethodSchemas[method];
  if (!schemas) return undefined;
  return { params: schemas.params ? validatorFor(schemas.params) : null, result: schemas.result ? validatorFor(schemas.result) : null };
}

/** Null when valid; else the most specific violation (the deepest instance path). */
export function checkAgainst(validator: GeneratedValidator, value: unknown): SchemaViolation | null {
  if (validator(value)) return null;
  const errors = validator.errors ?? [];
  const found = mostSpecific(errors);
  return (isOpMismatch(errors, found) ? withinVariant(found, value) : null) ?? found;
}

/** The deepest error is a variant's `op` const: the op may be right and another field wrong. */
function isOpMismatch(errors: readonly ErrorObject[], found: SchemaViolation): boolean {
  return found.pointer.endsWith('/op') && errors.some((e) => e.instancePath === found.pointer && e.keyword === 'const');
}

/**
 * Edits are a union tagged by `op`. Every variant reports under anyOf, and the deepest error is then
 * often another variant's "op must be equal to constant", although the op is right and a field of
 * its own variant is missing. The edit is checked again against the variant its op names.
 */
const EDIT_VARIANTS: GeneratedValidator[] = [generated.validateElideEdit, generated.validateInjectDigestEdit, generated.validateProviderCompactEdit, generated.validateCacheEditEdit];

function withinVariant(found: SchemaViolation, value: unknown): SchemaViolation | null {
  const at = found.pointer.slice(0, -'/op'.length);
  const edit = resolvePointer(value, at);
  if (typeof edit !== 'object' || edit === null) return null;
  for (const variant of EDIT_VARIANTS) {
    if (variant(edit)) return null;
    const errors = variant.errors ?? [];
    if (errors.some((e) => e.instancePath === '/op')) continue;
    const inner = mostSpecific(errors);
    return { pointer: at + inner.pointer, message: inner.message };
  }
  return null;
}

function resolvePointer(value: unknown, pointer: string): unknown {
  let node = value;
  for (const raw of pointer.split('/').slice(1)) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

const depth = (pointer: string): number => (pointer === '' ? 0 : pointer.split('/').length);

/**
 * The violation to report from a validator's errors: the deepest, counted in path steps (under
 * anyOf every branch reports, and the deepest path is where the value actually went wrong), the
 * first of equals (ajv reports array elements in order, so `/scores/0` before `/scores/10`).
 */
export function mostSpecific(errors: readonly ErrorObject[]): SchemaViolation {
  if (errors.length === 0) return { pointer: '', message: 'does not match the schema' };
  let best = errors[0]!;
  for (const e of errors) if (depth(e.instancePath) > depth(best.instancePath)) best = e;
  const allowed = allowedValues(errors, best);
  if (allowed) return { pointer: best.instancePath, message: allowed };
  const extra = best.keyword === 'additionalProperties' ? ` (${String((best.params as { additionalProperty?: unknown }).additionalProperty)})` : '';
  return { pointer: best.instancePath, message: `${best.message ?? 'is invalid'}${extra}` };
}

/**
 * "must be one of ..." with the values themselves, for a value that missed a closed vocabulary: an
 * enum, or the consts of a union's variants (each variant reports its own const at the same place,
 * so they are gathered). null when `chosen` is not such an error.
 */
export function allowedValues(errors: readonly ErrorObject[], chosen: ErrorObject): string | null {
  if (chosen.keyword !== 'const' && chosen.keyword !== 'enum') return null;
  const values: unknown[] = [];
  for (const e of errors) {
    if (e.instancePath !== chosen.instancePath) continue;
    const params = e.params as { allowedValue?: unknown; allowedValues?: unknown };
    if (e.keyword === 'const') values.push(params.allowedValue);
    if (e.keyword === 'enum' && Array.isArray(params.allowedValues)) values.push(...params.allowedValues);
  }
  const listed = [...new Set(values.map((v) => JSON.stringify(v)))];
  if (listed.length === 0) return null;
  return listed.length === 1 ? `must be ${listed[0]}` : `must be one of ${listed.join(', ')}`;
}

/**
 * "must not be ..." with the value itself, for a value a `not` keyword excludes (ajv says only "must
 * NOT be valid", which reads as nothing). null when `chosen` is not such an error.
 */
export function excludedValue(chosen: ErrorObject, data: unknown): string | null {
  if (chosen.keyword !== 'not') return null;
  let value = data;
  for (const token of chosen.instancePath.split('/').slice(1)) {
    if (value === null || typeof value !== 'object') return null;
    value = (value as Record<string, unknown>)[token.replaceAll('~1', '/').replaceAll('~0', '~')];
  }
  const shown = JSON.stringify(value);
  return shown === undefined || shown.length > 120 ? 'is a value the schema excludes' : `must not be ${shown}`;
}
