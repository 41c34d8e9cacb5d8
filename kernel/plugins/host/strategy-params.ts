/**
 * A strategy's `strategy_params` (from the config) against the `params_schema` it declares in its
 * handshake: a typo in a config table is refused before the strategy runs, as the schemas promise,
 * instead of being handed to a strategy that may silently ignore it.
 *
 * The schema is the plugin's, but it is evaluated here, in the CLI's process, so it must not be able
 * to hold the CLI: a `pattern` can backtrack for hours (`^(a+)+$` against a long value), and no
 * deadline interrupts a regular expression on the thread that runs it. A schema with a pattern is
 * therefore checked on a worker thread that is ended at a deadline; one without (nearly all) is
 * checked here, with no thread to start.
 *
 * A string the schema marks `"format": "strategy-id"` names another strategy (a selector's
 * candidates, an editor). Given the ids the installed and built-in bundles serve, the check refuses
 * one nothing serves, so the kernel learns which params are ids from the schema, never by a
 * strategy's name. The check stops at the first error, so a wrong shape is said alone; when that
 * first error is an unknown id, the params are run through again to the end, so every unknown id is
 * named at once rather than one per attempt.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { Ajv, ErrorObject, ValidateFunction } from 'ajv';
import { LruMap } from '../../../sdk/lru-map.js';
import { STRATEGY_ID_FORMAT } from '../../../sdk/strategy/plan.js';
import { GobstopperError } from '../../errors.js';
import { meantNote } from '../../text/edit-distance.js';
import { allowedValues, excludedValue, mostSpecific } from '../protocol/schema-check.js';

/** How long a check with patterns may take; a real one takes milliseconds, a worker's start most of them. */
export const PARAMS_CHECK_DEADLINE_MS = 5_000;

/**
 * What a check found: the errors ajv reported up to the first (`errors`) and, when that first one is
 * an unknown strategy id, every error to the end (`everyError`); or why the schema cannot be used.
 */
type Verdict = { valid: true } | { valid: false; errors: ErrorObject[]; everyError: ErrorObject[] } | { unusable: string };

/**
 * The strategy ids the check in progress accepts; null accepts any (the shape is the schema's to
 * check). Set only around one synchronous validation, so checks never see each other's.
 */
let servedStrategies: ReadonlySet<string> | null = null;

/** Whether an error is a string marked as a strategy id that no bundle serves. */
const isUnknownId = (error: ErrorObject | undefined): error is ErrorObject => error?.keyword === 'format' && (error.params as { format?: unknown }).format === STRATEGY_ID_FORMAT;

/** The Ajv class, loaded by the first check (judgeSafely): ~60 modules that most commands never use. */
let AjvClass: typeof Ajv | null = null;

/**
 * Drops what compiling `schema` left registered under its `$id`: the validator keeps what it
 * needs, and a registration would make the next schema declaring that `$id` (a template copied from
 * plugin to plugin) "already exist", refused for another strategy's sake. An `$id` that is not a
 * string was never registered, and ajv's removal throws on it.
 */
function forget(ajv: Ajv | null, schema: object): void {
  try {
    ajv?.removeSchema(schema);
  } catch {
    // nothing was kept
  }
}

/**
 * Validators compiled per schema text (a process asks about the same few schemas over and over),
 * stopping at the first error or going on to the end. The ajv instance is made at the first
 * schema, so a process that never sees an unknown id never makes the second.
 */
function validators(allErrors: boolean): (schema: object) => ValidateFunction | Error {
  let ajv: Ajv | null = null;
  const compiled = new Map<string, ValidateFunction | Error>();
  return (schema) => {
    const key = JSON.stringify(schema);
    let found = compiled.get(key);
    if (!found) {
      try {
        if (ajv === null) {
          // A plugin's schema may name formats ajv does not know; they are ignored without a word on the CLI's stderr.
          ajv = new AjvClass!({ strict: false, allErrors, logger: false });
          ajv.addFormat(STRATEGY_ID_FORMAT, { type: 'string', validate: (id: string) => servedStrategies === null || servedStrategies.has(id) });
        }
        found = ajv.compile(schema);
      } catch (error) {
        found = error instanceof Error ? error : new Error(String(error));
      } finally {
        forget(ajv, schema);
      }
      compiled.set(key, found);
    }
    return found;
  };
}

const firstErrorValidator = validators(false);
const everyErrorValidator = validators(true);

/**
 * A schema can compile and still not evaluate: {"$ref": "#"} refers to itself without end, and the
 * stack overflow it ends in is the plugin's fault, not an internal one.
 */
const whyUnusable = (error: unknown) => (error instanceof RangeError ? 'it refers to itself without end' : error instanceof Error ? error.message : String(error));

function judgeHere(schema: object, params: unknown, strategyIds: readonly string[] | null): Verdict {
  const validate = firstErrorValidator(schema);
  if (validate instanceof Error) return { unusable: validate.message };
  servedStrategies = strategyIds === null ? null : new Set(strategyIds);
  try {
    if (validate(params)) return { valid: true };
    const errors = validate.errors ?? [];
    if (!isUnknownId(errors[0])) return { valid: false, errors, everyError: [] };
    const validateAll = everyErrorValidator(schema);
    if (validateAll instanceof Error) return { unusable: validateAll.message };
    validateAll(params);
    return { valid: false, errors, everyError: validateAll.errors ?? [] };
  } catch (error) {
    return { unusable: whyUnusable(error) };
  } finally {
    servedStrategies = null;
  }
}

/** Whether any keyword of the schema runs a regular expression (`pattern`, `patternProperties`). */
function holdsPatterns(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(holdsPatterns);
  if (value === null || typeof value !== 'object') return false;
  return Object.entries(value).some(([key, v]) => key === 'pattern' || key === 'patternProperties' || holdsPatterns(v));
}

// Plain CommonJS for an eval'd worker, so it runs the same from the sources (tests) and from dist/;
// ajv is loaded by the absolute path this module resolves it to.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { Ajv } = require(workerData.ajvPath);
const served = workerData.strategyIds === null ? null : new Set(workerData.strategyIds);
const validator = (allErrors) => {
  const ajv = new Ajv({ strict: false, allErrors, logger: false });
  ajv.addFormat(workerData.strategyIdFormat, { type: 'string', validate: (id) => served === null || served.has(id) });
  return ajv.compile(workerData.schema);
};
let verdict;
try {
  const validate = validator(false);
  try {
    if (validate(workerData.params)) verdict = { valid: true };
    else {
      const errors = validate.errors || [];
      const first = errors[0];
      let everyError = [];
      if (first && first.keyword === 'format' && first.params.format === workerData.strategyIdFormat) {
        const validateAll = validator(true);
        validateAll(workerData.params);
        everyError = validateAll.errors || [];
      }
      verdict = { valid: false, errors, everyError };
    }
  } catch (error) {
    verdict = { unusable: error instanceof RangeError ? 'it refers to itself without end' : String((error && error.message) || error) };
  }
} catch (error) {
  verdict = { unusable: String((error && error.message) || error) };
}
parentPort.postMessage(JSON.parse(JSON.stringify(verdict)));
`;

const ajvPath = createRequire(import.meta.url).resolve('ajv');

function judgeOffThread(strategyId: string, schema: object, params: unknown, strategyIds: readonly string[] | null): Promise<Verdict> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { ajvPath, schema, params, strategyIds, strategyIdFormat: STRATEGY_ID_FORMAT } });
    const timer = setTimeout(() => {
      void worker.terminate();
      reject(
        new GobstopperError(
          'plugin_schema_violation',
          `strategy ${strategyId} declares a params_schema that is not a usable JSON Schema (checking the strategy_params against it took over ${PARAMS_CHECK_DEADLINE_MS / 1000} s; a pattern that backtracks without end?)`,
        ),
      );
    }, PARAMS_CHECK_DEADLINE_MS);
    const settle = (verdict: Verdict | Error) => {
      clearTimeout(timer);
      void worker.terminate();
      if (verdict instanceof Error) reject(verdict);
      else resolve(verdict);
    };
    worker.once('message', (verdict: Verdict) => settle(verdict));
    worker.once('error', (error) => settle({ unusable: whyUnusable(error) }));
    worker.once('exit', (code) => settle(new GobstopperError('internal', `the check of strategy ${strategyId}'s strategy_params ended without an answer (exit ${code})`)));
  });
}

/**
 * Whether validating `params` could run a regular expression at all: `pattern` tests strings and
 * `patternProperties` (and `propertyNames`) test member names, so parameters with neither (the
 * usual `{}`) are safe to check here whatever the schema holds, with no thread to start.
 */
function offersText(value: unknown): boolean {
  if (typeof value === 'string') return true;
  if (Array.isArray(value)) return value.some(offersText);
  if (value === null || typeof value !== 'object') return false;
  return Object.keys(value).length > 0;
}

/** Members a schema that declares no params at all may have besides them, none of which can refuse `{}`. */
const ANNOTATIONS = new Set(['description', 'title', '$comment']);

/**
 * Whether `params` is `{}` and `schema` declares no params in the plain way every built-in file
 * strategy does (the SDK's NO_PARAMS_SCHEMA: an object, no properties, additional ones allowed or
 * not). Each of its members is checked here, so the verdict (valid) is the one Ajv would give, and
 * a `plan` with no params then never loads the compiler (~80-100 ms).
 */
function emptyParamsOfParamlessSchema(schema: object, params: unknown): boolean {
  if (params === null || typeof params !== 'object' || Array.isArray(params) || Object.keys(params).length > 0) return false;
  if (Array.isArray(schema)) return false;
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'type') {
      if (value !== 'object') return false;
    } else if (key === 'properties') {
      if (value === null || typeof value !== 'object' || Array.isArray(value) || Object.keys(value).length > 0) return false;
    } else if (key === 'additionalProperties') {
      if (typeof value !== 'boolean') return false;
    } else if (!ANNOTATIONS.has(key) || typeof value !== 'string') {
      return false;
    }
  }
  return true;
}

/** Verdicts on a worker, by schema and parameters: a watch or a bench checks the same pair over and over. */
const offThreadVerdicts = new LruMap<string, Verdict>(64);

async function judgeSafely(strategyId: string, schema: object, params: unknown, strategyIds: readonly string[] | null): Promise<Verdict> {
  if (emptyParamsOfParamlessSchema(schema, params)) return { valid: true };
  AjvClass ??= (await import('ajv')).Ajv;
  if (!offersText(params) || !holdsPatterns(schema)) return judgeHere(schema, params, strategyIds);
  const key = JSON.stringify([schema, params, strategyIds]);
  const known = offThreadVerdicts.get(key);
  if (known) return known;
  const verdict = await judgeOffThread(strategyId, schema, params, strategyIds);
  offThreadVerdicts.set(key, verdict);
  return verdict;
}

/** The member names and indexes a JSON pointer steps through. */
const pointerSteps = (pointer: string): string[] => (pointer === '' ? [] : pointer.slice(1).split('/').map((step) => step.replaceAll('~1', '/').replaceAll('~0', '~')));

/** A JSON pointer into strategy_params as a config key: `/candidates/1` is `strategy_params.candidates[1]`. */
function paramsKey(pointer: string): string {
  return pointerSteps(pointer).reduce((key, step) => (/^\d+$/.test(step) ? `${key}[${step}]` : /^[A-Za-z0-9_-]+$/.test(step) ? `${key}.${step}` : `${key}.${JSON.stringify(step)}`), 'strategy_params');
}

function valueAt(params: unknown, pointer: string): unknown {
  return pointerSteps(pointer).reduce<unknown>((node, step) => (node !== null && typeof node === 'object' ? (node as Record<string, unknown>)[step] : undefined), params);
}

/** An id no bundle serves, where strategy_params holds it: `key` is the value's, or the object's whose member name it is. */
export interface UnknownStrategyId {
  id: string;
  key: string;
  place: 'value' | 'member_name';
}

/**
 * One error naming every unknown id found, each with its key, in the order the schema met them; its
 * details keep the first one's id and key where they always were, and list all of them in `unknown`,
 * each with its `place`: the value at the key, or a member name of the object there.
 */
function unknownStrategies(strategyId: string, params: unknown, found: ErrorObject[], strategyIds: readonly string[]): GobstopperError {
  const unknown = new Map<string, UnknownStrategyId>();
  for (const error of found) {
    // A member name marked by propertyNames is the id; the error points at the object holding it.
    const place = error.propertyName === undefined ? 'value' : 'member_name';
    const id = error.propertyName ?? String(valueAt(params, error.instancePath));
    // One value can fail the mark in more than one branch of an anyOf: it is named once.
    const where = JSON.stringify([error.instancePath, error.propertyName ?? null]);
    if (!unknown.has(where)) unknown.set(where, { id, key: paramsKey(error.instancePath), place });
  }
  const all = [...unknown.values()];
  const named = all.map(({ id, key }) => `'${id}' in ${key}`);
  const listed = named.length === 1 ? `strategy ${named[0]}` : `strategies ${named.slice(0, -1).join(', ')} and ${named.at(-1)}`;
  const [{ id, key }] = all as [UnknownStrategyId];
  const meant = all.length === 1 ? meantNote(id, strategyIds) : '';
  return new GobstopperError('unknown_strategy', `unknown ${listed} of ${strategyId}${meant}; known: ${strategyIds.join(', ') || 'none'}`, {
    details: { kind: 'strategy', id, strategy: strategyId, key, unknown: all },
  });
}

/**
 * Where a schema breaks the JSON Schema meta-schema, and what may go there. ajv's own message lists
 * every branch it tried ("data/properties/n/type must be equal to one of the allowed values,
 * data/properties/n/type must be array, …"); the author needs the one place and its choices. null
 * for a schema the meta-schema admits (one unusable for another reason).
 */
async function metaSchemaProblem(schema: object): Promise<string | null> {
  AjvClass ??= (await import('ajv')).Ajv;
  const ajv = new AjvClass({ strict: false, allErrors: true, logger: false });
  if (ajv.validateSchema(schema) !== false || !ajv.errors?.length) return null;
  const { pointer, message } = mostSpecific(ajv.errors);
  return pointer ? `at ${pointer}: ${message}` : message;
}

/**
 * Refuses `params` that do not match `schema`. With `strategyIds` (the ids some bundle serves), a
 * string marked as a strategy id must be one of them; without, any string passes that mark.
 */
export async function checkStrategyParams(strategyId: string, schema: unknown, params: unknown, strategyIds: readonly string[] | null = null): Promise<void> {
  if (!schema || typeof schema !== 'object') return;
  const verdict = await judgeSafely(strategyId, schema, params, strategyIds);
  if ('unusable' in verdict) {
    const why = (await metaSchemaProblem(schema)) ?? verdict.unusable;
    throw new GobstopperError('plugin_schema_violation', `strategy ${strategyId} declares a params_schema that is not a usable JSON Schema (${why})`);
  }
  if (verdict.valid) return;
  const errors = verdict.errors;
  const first = errors[0];
  if (strategyIds !== null && isUnknownId(first)) throw unknownStrategies(strategyId, params, [first, ...verdict.everyError.filter(isUnknownId)], strategyIds);
  const where = first?.instancePath ? ` at ${first.instancePath}` : '';
  const extra = first?.keyword === 'additionalProperties' ? ` '${String((first.params as { additionalProperty?: unknown }).additionalProperty)}'` : '';
  const said = (first && (allowedValues(errors, first) ?? excludedValue(first, params))) ?? first?.message ?? 'invalid';
  throw new GobstopperError('invalid_strategy_params', `strategy_params for ${strategyId} do not match the params_schema it declares${where}: ${said}${extra}`, {
    details: { strategy: strategyId, pointer: first?.instancePath ?? '' },
  });
}
