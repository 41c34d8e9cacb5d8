/**
 * A strategy's `strategy_params` (from the config) against the `params_schema` it declares in its
 * handshake: a typo in a config table is refused before the strategy runs, as the schemas promise,
 * instead of being handed to a strategy that may silently ignore it.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import { GobstopperError } from '../../errors.js';
import { allowedValues } from '../protocol/schema-check.js';

const ajv = new Ajv({ strict: false, allErrors: false });
/** Compiled per schema text: a process asks about the same few schemas over and over. */
const compiled = new Map<string, ValidateFunction | Error>();

function validatorFor(schema: object): ValidateFunction | Error {
  const key = JSON.stringify(schema);
  let found = compiled.get(key);
  if (!found) {
    try {
      found = ajv.compile(schema);
    } catch (error) {
      found = error instanceof Error ? error : new Error(String(error));
    }
    compiled.set(key, found);
  }
  return found;
}

export function checkStrategyParams(strategyId: string, schema: unknown, params: unknown): void {
  if (!schema || typeof schema !== 'object') return;
  const validate = validatorFor(schema);
  if (validate instanceof Error) {
    throw new GobstopperError('plugin_schema_violation', `strategy ${strategyId} declares a params_schema that is not a usable JSON Schema (${validate.message})`);
  }
  let valid: boolean;
  try {
    valid = validate(params);
  } catch (error) {
    // A schema can compile and still not evaluate: {"$ref": "#"} refers to itself without end, and
    // the stack overflow it ends in is the plugin's fault, not an internal one.
    const why = error instanceof RangeError ? 'it refers to itself without end' : error instanceof Error ? error.message : String(error);
    throw new GobstopperError('plugin_schema_violation', `strategy ${strategyId} declares a params_schema that is not a usable JSON Schema (${why})`);
  }
  if (valid) return;
  const first = validate.errors?.[0];
  const where = first?.instancePath ? ` at ${first.instancePath}` : '';
  const extra = first?.keyword === 'additionalProperties' ? ` '${String((first.params as { additionalProperty?: unknown }).additionalProperty)}'` : '';
  const said = (first && allowedValues(validate.errors ?? [], first)) ?? first?.message ?? 'invalid';
  throw new GobstopperError('invalid_strategy_params', `strategy_params for ${strategyId} do not match the params_schema it declares${where}: ${said}${extra}`, {
    details: { strategy: strategyId, pointer: first?.instancePath ?? '' },
  });
}
