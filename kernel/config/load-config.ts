/**
 * Loads the two configuration files: the user's (XDG path, or --config) and the project's (found by
 * walking up from the working directory). Both are schema-checked; nothing is merged here.
 */
import { isAbsolute, resolve } from 'node:path';
import type { ConfigFile, PolicyPatch } from '../../schemas/generated/types.js';
import { validateConfigFile } from '../../schemas/generated/validators.js';
import { GobstopperError } from '../errors.js';
import { userConfigPath } from './paths.js';
import { findProjectConfig } from './project-search.js';
import { readConfigFile, UnusableConfigPath, type ParsedConfig } from './read-config-file.js';
import { singleKeyViolation, WHOLE_NUMBER_RANGES, type WholeNumberKey } from '../policy/bounds.js';
import { describeSchemaError, placeOf, schemaErrorPlace, tableName, type ConfigPlace } from './schema-messages.js';

export type ConfigScope = 'user' | 'project';

export interface LoadedConfigFile {
  scope: ConfigScope;
  path: string;
  /** false when the user file does not exist; its data is then empty. */
  loaded: boolean;
  data: ConfigFile;
}

export interface LoadedConfig {
  user: LoadedConfigFile;
  project: LoadedConfigFile | null;
}

export interface LoadConfigOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** --config: replaces the user file; it must exist. */
  configPath?: string | undefined;
  /** Skip the project walk (tests of the user file alone, or callers with no project context). */
  project?: boolean;
}

export const MAX_LEGACY_COMMAND_BYTES = 4096;

/** Keys that make gobstopper run code. A project file comes with a repository, so it may not set them. */
const CODE_KEYS = ['command', 'trusted_legacy_command', 'plugin'] as const;

/** `place` names the table and key in the error's details, so a script can point at them. */
const invalid = (message: string, path?: string, place?: ConfigPlace) => new GobstopperError('invalid_config', message, place ? { details: { path, ...place } } : undefined);

export async function loadConfig(options: LoadConfigOptions = {}): Promise<LoadedConfig> {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const explicit = options.configPath !== undefined;
  if (options.configPath === '') throw new GobstopperError('config_not_found', '--config was given an empty path; give the path of a config file', { exit: 2 });
  const userPath = explicit ? resolve(cwd, options.configPath as string) : userConfigPath(env);
  const user = explicit ? asUsageError(() => loadFile('user', userPath)) : loadFile('user', userPath);
  // A --config that names nothing is the command line's mistake, as a missing --claude-home is.
  if (explicit && !user.loaded) throw new GobstopperError('config_not_found', `config ${userPath} does not exist`, { exit: 2 });
  let project: LoadedConfigFile | null = null;
  if (options.project !== false) {
    const projectPath = await findProjectConfig(cwd, env.HOME || undefined);
    if (projectPath !== null && resolve(projectPath) !== resolve(userPath)) project = loadFile('project', projectPath);
  }
  return { user, project };
}

/** A --config naming a directory or a link is the command line's mistake, as a missing one is. */
function asUsageError<T>(load: () => T): T {
  try {
    return load();
  } catch (error) {
    if (!(error instanceof UnusableConfigPath)) throw error;
    throw new GobstopperError(error.code, error.message, { exit: 2, details: error.details, cause: error });
  }
}

/**
 * The config, or why it cannot be read, for a command that can do its job without it (`plugin
 * list`, `check` and `inspect` of a path, `remove`). A `--config` the command line names that
 * cannot be read is the command line's mistake and is thrown; a broken default file (user or
 * project) is returned as the problem, for the command to say where it matters.
 */
export async function loadConfigOrProblem(configPath: string | undefined): Promise<{ loaded: LoadedConfig } | { problem: GobstopperError }> {
  try {
    return { loaded: await loadConfig({ configPath }) };
  } catch (error) {
    if (configPath !== undefined || !(error instanceof GobstopperError)) throw error;
    return { problem: error };
  }
}

export function loadFile(scope: ConfigScope, path: string): LoadedConfigFile {
  const read = readConfigFile(path);
  if (read.status === 'missing') {
    if (scope === 'project') throw invalid(`config ${path} vanished while it was being read`);
    return { scope, path, loaded: false, data: {} };
  }
  return { scope, path, loaded: true, data: checkConfigData(read, scope, path) };
}

/** Schema, then the rules a schema cannot say. */
export function checkConfigData(parsed: ParsedConfig, scope: ConfigScope, path: string): ConfigFile {
  const { data, floats, dates } = parsed;
  if (!validateConfigFile(data)) {
    const errors = validateConfigFile.errors ?? [];
    throw invalid(`config ${path}: ${describeSchemaError(errors, data, floats, dates)}`, path, schemaErrorPlace(errors));
  }
  requireWholeNumbers(parsed, path);
  requireNoDates(parsed, path);
  const config = data as ConfigFile;
  for (const { segments, patch } of policyTables(config)) {
    const table = tableName(segments);
    if (scope === 'project') {
      const codeKey = CODE_KEYS.find((k) => patch[k] !== undefined);
      if (codeKey) {
        throw invalid(`config ${path}: '${codeKey}' in ${table} is not allowed in a project file; commands and plugins are configured only in the user config`, path, placeOf(segments, codeKey));
      }
    }
    if (patch.command !== undefined && patch.plugin !== undefined) {
      throw invalid(`config ${path}: ${table} sets both 'command' and 'plugin'; a table may name one proposer`, path, placeOf(segments, 'plugin'));
    }
    if (patch.command !== undefined && Buffer.byteLength(patch.command, 'utf8') > MAX_LEGACY_COMMAND_BYTES) {
      throw invalid(`config ${path}: 'command' in ${table} is longer than ${MAX_LEGACY_COMMAND_BYTES} bytes`, path, placeOf(segments, 'command'));
    }
    // A process argument cannot hold a NUL; the spawn would fail as an internal error naming no table.
    if (patch.command?.includes('\0')) {
      throw invalid(`config ${path}: 'command' in ${table} holds a NUL character (\\u0000), which no command line can`, path, placeOf(segments, 'command'));
    }
    if (patch.plugin !== undefined && !isAbsolute(patch.plugin.manifest)) {
      throw invalid(`config ${path}: 'manifest' in ${tableName([...segments, 'plugin'])} must be an absolute path`, path, placeOf([...segments, 'plugin'], 'manifest'));
    }
    requireKeyRanges(patch, segments, path);
  }
  return config;
}

/**
 * A value out of its own range is wrong in any table, used or not: a preset with a threshold of 3
 * fails when the file loads, not the day someone picks that preset. Rules between keys (the floor
 * below the trigger) wait for the layered policy, where a later table may still set the other key.
 */
function requireKeyRanges(patch: PolicyPatch, segments: readonly string[], path: string): void {
  const table = tableName(segments);
  for (const key of [...(Object.keys(WHOLE_NUMBER_RANGES) as WholeNumberKey[]), 'keep_score_threshold'] as const) {
    const value = patch[key];
    if (value === undefined) continue;
    const problem = singleKeyViolation(key, value);
    if (problem === null) continue;
    // The threshold's sentence is the original's exact text, and the schema's nan/inf message uses it too.
    const sentence = key === 'keep_score_threshold' ? `${problem} in ${table}` : `'${key}' in ${table}${problem.slice(key.length)}`;
    throw invalid(`config ${path}: ${sentence} (got ${value})`, path, placeOf(segments, key));
  }
}

/**
 * TOML tells `8` from `8.0`; JSON Schema, over JavaScript numbers, cannot. Each whole number the file
 * wrote as a float is checked once more as a value no integer can be (NaN): where the schema then
 * says "must be integer", the key wants a whole number and the float is refused. Keys that take any
 * number (keep_score_threshold) are not affected.
 */
function requireWholeNumbers({ data, floats }: ParsedConfig, path: string): void {
  const suspects = [...floats].filter((pointer) => Number.isInteger(valueAt(data, pointer)));
  if (suspects.length === 0) return;
  const probe = structuredClone(data);
  for (const pointer of suspects) setAt(probe, pointer, Number.NaN);
  if (validateConfigFile(probe)) return;
  const wanted = new Set(suspects);
  const refused = (validateConfigFile.errors ?? []).find((e) => e.keyword === 'type' && e.params.type === 'integer' && wanted.has(e.instancePath));
  if (refused) throw invalid(`config ${path}: ${describeSchemaError([refused], data, floats)}`, path, schemaErrorPlace([refused]));
}

/**
 * A TOML date or time reaches the schema as its ISO text, which a string key would take: `strategy =
 * 1979-05-27` would name a strategy "1979-05-27". Each date is checked once more as a table, a value
 * no string key takes; where the schema then refuses it, the date was in a key's place. Free-form
 * tables (strategy_params) keep a date as its text.
 */
function requireNoDates({ data, floats, dates }: ParsedConfig, path: string): void {
  if (dates.size === 0) return;
  const probe = structuredClone(data);
  for (const pointer of dates) setAt(probe, pointer, {});
  if (validateConfigFile(probe)) return;
  const refused = (validateConfigFile.errors ?? []).find((e) => dates.has(e.instancePath));
  if (refused) throw invalid(`config ${path}: ${describeSchemaError([refused], data, floats, dates)}`, path, schemaErrorPlace([refused]));
}

function pointerKeys(pointer: string): string[] {
  return pointer
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function valueAt(data: unknown, pointer: string): unknown {
  let node = data;
  for (const key of pointerKeys(pointer)) node = (node as Record<string, unknown>)[key];
  return node;
}

function setAt(data: unknown, pointer: string, value: unknown): void {
  const keys = pointerKeys(pointer);
  const last = keys.pop()!;
  let node = data as Record<string, unknown>;
  for (const key of keys) node = node[key] as Record<string, unknown>;
  Object.defineProperty(node, last, { value, enumerable: true, writable: true, configurable: true });
}

export interface PolicyTable {
  segments: string[];
  patch: PolicyPatch;
}

/** Every policy-shaped table of a file, with its TOML path. */
export function policyTables(config: ConfigFile): PolicyTable[] {
  const tables: PolicyTable[] = [];
  if (config.policy) tables.push({ segments: ['policy'], patch: config.policy });
  for (const [id, patch] of Object.entries(config.provider ?? {})) if (patch) tables.push({ segments: ['provider', id], patch });
  for (const [name, patch] of Object.entries(config.presets ?? {})) tables.push({ segments: ['presets', name], patch });
  for (const [id, patch] of Object.entries(config.sessions ?? {})) tables.push({ segments: ['sessions', id], patch });
  return tables;
}
