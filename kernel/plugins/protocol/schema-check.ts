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
  return mostSpecific(validator.errors ?? []);
}

function mostSpecific(errors: ErrorObject[]): SchemaViolation {
  if (errors.length === 0) return { pointer: '', message: 'does not match the schema' };
  // Under anyOf every branch reports; the deepest path is where the value actually went wrong.
  let best = errors[0]!;
  for (const e of errors) if (e.instancePath.length > best.instancePath.length) best = e;
  const extra = best.keyword === 'additionalProperties' ? ` (${String((best.params as { additionalProperty?: unknown }).additionalProperty)})` : '';
  return { pointer: best.instancePath, message: `${best.message ?? 'is invalid'}${extra}` };
}
