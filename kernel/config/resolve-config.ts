/**
 * Layers the configuration into one policy, remembering where every value came from.
 *
 * Order, later wins: built-in defaults → [policy] → [provider.<id>] → [presets.<name>] (only with
 * --preset) → [sessions."<id>"] → flags. Each table layer is read from the user file first and then
 * the project file, so a project refines the user's table of the same name key by key; keys a layer
 * omits are inherited.
 *
 * Proposers: a table may set `command` or `plugin`, not both. A later `command` replaces an earlier
 * plugin and is untrusted unless its own table sets trusted_legacy_command = true (a later table may
 * also set it); a later `plugin` replaces an earlier command. --strategy drops both, except a plugin
 * pinned for the strategy --strategy names (the pin is how that id runs). A table that
 * switches to another strategy without giving strategy_params drops the inherited parameters, which
 * belonged to the previous strategy.
 */
import type { ConfigFileRef, PluginRef, PolicyPatch, PolicyValueSource, QuotaPressure } from '../../schemas/generated/types.js';
import { GobstopperError, usageError } from '../errors.js';
import { assertPolicyBounds } from '../policy/bounds.js';
import { DEFAULT_DISCOVERY_MAX_AGE_SECS, defaultPolicy, type PolicyValues } from '../policy/defaults.js';
import type { LoadedConfig, LoadedConfigFile } from './load-config.js';
import { tableName } from './schema-messages.js';
import { meantNote } from '../text/edit-distance.js';

export type ValueSource = PolicyValueSource;

export type ExternalProposer =
  | { kind: 'legacy_command'; command: string; table: string }
  | { kind: 'plugin'; manifest: string; trusted_sha256: string; table: string };

export interface PolicyFlags {
  strategy?: string | undefined;
  trigger_tokens?: number | undefined;
  floor_tokens?: number | undefined;
  quota_pressure?: QuotaPressure | undefined;
}

export interface ResolveOptions {
  provider?: string | null | undefined;
  session_id?: string | null | undefined;
  preset?: string | null | undefined;
  flags?: PolicyFlags;
}

export interface ResolvedConfig {
  values: PolicyValues;
  sources: Record<string, ValueSource>;
  external: ExternalProposer | null;
  provider: string | null;
  session_id: string | null;
  preset: string | null;
  files: ConfigFileRef[];
  discovery: { max_age_secs: number };
  /**
   * `[sessions."…"]` tables that name this session loosely (a prefix of its id, or another case)
   * while no table names it exactly: they never apply, and commands say so (looseSessionKeys).
   */
  unapplied_session_tables: string[];
  /**
   * The policy keys this session's `[sessions."<id>"]` tables set (user and project file), sorted;
   * null when no file has a table for it. `config` tells a table flags override from no table.
   */
  session_table_keys: string[] | null;
  /** The files that hold this session's `[sessions."<id>"]` table, user file first. */
  session_table_paths: string[];
}

type PlainKey = Exclude<keyof PolicyValues, 'strategy_params'>;
const PLAIN_KEYS: PlainKey[] = [
  'strategy',
  'trigger_tokens',
  'floor_tokens',
  'min_savings_tokens',
  'keep_recent_tool_outputs',
  'keep_score_threshold',
  'min_interval_secs',
  'apply_hold_secs',
  'block_tokens',
  'keep_recent_turns',
  'result_max_bytes',
  'quota_pressure',
  'adaptive',
  'scorer',
];

const STRATEGY_ID = /^[A-Za-z0-9_.-]{1,128}$/;

interface Layer {
  source: ValueSource;
  patch: PolicyPatch;
}

export function configFileRefs(config: LoadedConfig): ConfigFileRef[] {
  const refs: ConfigFileRef[] = [{ scope: 'user', path: config.user.path, loaded: config.user.loaded }];
  if (config.project) refs.push({ scope: 'project', path: config.project.path, loaded: config.project.loaded });
  return refs;
}

/** Preset names defined by either file, sorted. */
export function presetNames(config: LoadedConfig): string[] {
  const names = new Set<string>();
  for (const file of filesOf(config)) for (const name of Object.keys(file.data.presets ?? {})) names.add(name);
  return [...names].sort();
}

export function resolveConfig(config: LoadedConfig, options: ResolveOptions = {}): ResolvedConfig {
  const provider = options.provider ?? null;
  const sessionId = options.session_id ?? null;
  const preset = options.preset ?? null;
  if (preset !== null && !presetNames(config).includes(preset)) throw unknownPreset(preset, config);

  const layers: Layer[] = [];
  const fromFiles = (layer: ValueSource['layer'], segments: string[], pick: (f: LoadedConfigFile) => PolicyPatch | undefined) => {
    for (const file of filesOf(config)) {
      const patch = pick(file);
      if (patch) layers.push({ source: { layer, scope: file.scope, table: tableName(segments), path: file.path }, patch });
    }
  };
  fromFiles('policy', ['policy'], (f) => f.data.policy);
  if (provider !== null) fromFiles('provider', ['provider', provider], (f) => providerTable(f, provider));
  if (preset !== null) fromFiles('preset', ['presets', preset], (f) => ownEntry(f.data.presets, preset));
  if (sessionId !== null) fromFiles('session', ['sessions', sessionId], (f) => ownEntry(f.data.sessions, sessionId));

  const state = new LayerState();
  for (const layer of layers) state.apply(layer);
  state.applyFlags(options.flags ?? {});

  const external = state.external();
  const sessionLayers = layers.filter((l) => l.source.layer === 'session');
  assertPolicyBounds(state.values, { origin: (key) => describeSource(key, state.sources[key]), fromFlag: (key) => state.sources[key]?.layer === 'flag' });
  return {
    values: state.values,
    sources: state.sources,
    external,
    provider,
    session_id: sessionId,
    preset,
    files: configFileRefs(config),
    discovery: { max_age_secs: discoveryMaxAge(config) },
    // Reported beside an exact-id table too: what a loose table sets is lost either way.
    unapplied_session_tables: sessionId !== null ? looseSessionKeys(config, sessionId) : [],
    session_table_keys: sessionLayers.length === 0 ? null : [...new Set(sessionLayers.flatMap((l) => Object.keys(l.patch)))].filter((key) => Object.hasOwn(state.sources, key)).sort(),
    session_table_paths: sessionLayers.map((l) => l.source.path).filter((path): path is string => path !== null),
  };
}

/** What `config` says of `resolved.unapplied_session_tables`; null when there are none. */
export function unappliedSessionNote(resolved: Pick<ResolvedConfig, 'unapplied_session_tables'>): string | null {
  const keys = resolved.unapplied_session_tables.map((key) => `[sessions.${JSON.stringify(key)}]`);
  if (keys.length === 0) return null;
  return `${keys.join(', ')} ${keys.length === 1 ? 'is' : 'are'} not applied: a session table is keyed by the full session id`;
}

/** The same as a warning of plan, apply and eval, which name the id the table should have. */
export function unappliedSessionWarning(resolved: Pick<ResolvedConfig, 'unapplied_session_tables' | 'session_id'>): string | null {
  const note = unappliedSessionNote(resolved);
  return note === null || resolved.session_id === null ? null : `${note} (${resolved.session_id})`;
}

class LayerState {
  values: PolicyValues = defaultPolicy();
  sources: Record<string, ValueSource> = {};
  private command: { value: string; table: string; path: string | null } | null = null;
  private plugin: { value: PluginRef; table: string } | null = null;
  private trusted = false;
  /** The table whose `trusted_legacy_command = false` withdrew trust, when one did. */
  private distrustedBy: ValueSource | null = null;

  constructor() {
    const builtin: ValueSource = { layer: 'default', scope: 'builtin', table: null, path: null };
    for (const key of [...PLAIN_KEYS, 'strategy_params', 'command', 'trusted_legacy_command', 'plugin']) this.sources[key] = builtin;
  }

  apply({ source, patch }: Layer): void {
    if (patch.strategy !== undefined && patch.strategy !== this.values.strategy && patch.strategy_params === undefined) this.dropParams(source);
    for (const key of PLAIN_KEYS) {
      const value = patch[key];
      if (value === undefined) continue;
      (this.values as unknown as Record<string, unknown>)[key] = value;
      this.sources[key] = source;
    }
    if (patch.strategy_params !== undefined) {
      this.values.strategy_params = patch.strategy_params;
      this.sources.strategy_params = source;
    }
    const table = source.table ?? '';
    if (patch.command !== undefined) {
      this.command = { value: patch.command, table, path: source.path };
      this.plugin = null;
      this.trusted = false;
      this.distrustedBy = null;
      this.sources.command = this.sources.plugin = this.sources.trusted_legacy_command = source;
    }
    if (patch.plugin !== undefined) {
      this.plugin = { value: patch.plugin, table };
      this.command = null;
      this.trusted = false;
      this.distrustedBy = null;
      this.sources.command = this.sources.plugin = this.sources.trusted_legacy_command = source;
    }
    if (patch.trusted_legacy_command !== undefined) {
      this.trusted = patch.trusted_legacy_command;
      this.distrustedBy = patch.trusted_legacy_command ? null : source;
      this.sources.trusted_legacy_command = source;
    }
  }

  /**
   * A strategy switch drops the parameters an earlier table gave the previous strategy. Where no
   * table gave any, nothing was dropped: they stay the built-in default, and `config` does not send
   * the reader looking for strategy_params in a table that never mentions them.
   */
  private dropParams(source: ValueSource): void {
    if (this.sources.strategy_params?.layer === 'default') return;
    this.values.strategy_params = {};
    this.sources.strategy_params = source;
  }

  applyFlags(flags: PolicyFlags): void {
    const source: ValueSource = { layer: 'flag', scope: 'flag', table: null, path: null };
    if (flags.strategy !== undefined) {
      if (!STRATEGY_ID.test(flags.strategy)) {
        throw usageError('invalid_strategy_id', `--strategy ${JSON.stringify(flags.strategy)} is not a strategy id (1-128 letters, digits, '_', '.' or '-')`);
      }
      if (flags.strategy !== this.values.strategy) this.dropParams(source);
      // An explicit strategy is a request to run that strategy, not the configured proposer; but a
      // plugin pinned for the very strategy named is how that strategy runs, so it stays.
      const pinnedHere = this.plugin !== null && flags.strategy === this.values.strategy;
      this.values.strategy = flags.strategy;
      this.sources.strategy = source;
      if (!pinnedHere) {
        this.command = null;
        this.plugin = null;
        this.trusted = false;
        this.sources.command = this.sources.plugin = this.sources.trusted_legacy_command = source;
      }
    }
    if (flags.trigger_tokens !== undefined) {
      this.values.trigger_tokens = flags.trigger_tokens;
      this.sources.trigger_tokens = source;
    }
    if (flags.floor_tokens !== undefined) {
      this.values.floor_tokens = flags.floor_tokens;
      this.sources.floor_tokens = source;
    }
    if (flags.quota_pressure !== undefined) {
      this.values.quota_pressure = flags.quota_pressure;
      this.sources.quota_pressure = source;
    }
  }

  external(): ExternalProposer | null {
    if (this.command) {
      if (!this.trusted) {
        const where = this.command.path ? `${this.command.table} of ${this.command.path}` : this.command.table;
        // "Add it to that table" would send someone to a table that may already say true, when a
        // later table (or the same one) is what says false.
        const off = this.distrustedBy;
        const fix = off === null ? 'add it to that table if you trust the command' : `trusted_legacy_command = false in ${off.path ? `${off.table} of ${off.path}` : off.table} withdraws it`;
        throw new GobstopperError('untrusted_legacy_command', `'command' in ${where} runs only with trusted_legacy_command = true; ${fix}`);
      }
      return { kind: 'legacy_command', command: this.command.value, table: this.command.table };
    }
    if (this.plugin) return { kind: 'plugin', manifest: this.plugin.value.manifest, trusted_sha256: this.plugin.value.trusted_sha256, table: this.plugin.table };
    return null;
  }
}

export function describeSource(key: string, source: ValueSource | undefined): string | null {
  if (!source) return null;
  if (source.layer === 'default') return `${key}: built-in default`;
  if (source.layer === 'flag') return `${key}: command-line flag`;
  return `${key}: ${source.table} in ${source.path}`;
}

/**
 * `[sessions."…"]` keys that name this session only loosely (a prefix of its id, or its id in
 * another case). A session table applies by the full id alone, so these never do; `config` says so.
 */
export function looseSessionKeys(config: LoadedConfig, sessionId: string): string[] {
  const id = sessionId.toLowerCase();
  const keys = new Set<string>();
  for (const file of filesOf(config)) {
    for (const key of Object.keys(file.data.sessions ?? {})) if (key !== sessionId && key !== '' && id.startsWith(key.toLowerCase())) keys.add(key);
  }
  return [...keys].sort();
}

export function filesOf(config: LoadedConfig): LoadedConfigFile[] {
  return config.project ? [config.user, config.project] : [config.user];
}

function providerTable(file: LoadedConfigFile, provider: string): PolicyPatch | undefined {
  return ownEntry(file.data.provider as Record<string, PolicyPatch> | undefined, provider);
}

function ownEntry<T>(table: Record<string, T> | undefined, key: string): T | undefined {
  return table && Object.hasOwn(table, key) ? table[key] : undefined;
}

/** [discovery] max_age_secs, the project file's over the user's; no policy is resolved for it. */
export function discoveryMaxAge(config: LoadedConfig): number {
  let value = DEFAULT_DISCOVERY_MAX_AGE_SECS;
  for (const file of filesOf(config)) if (file.data.discovery?.max_age_secs !== undefined) value = file.data.discovery.max_age_secs;
  return value;
}

function unknownPreset(preset: string, config: LoadedConfig): GobstopperError {
  const names = presetNames(config);
  const where = filesOf(config).map((f) => f.path).join(' or ');
  const known = names.length > 0 ? `configured presets: ${names.join(', ')}` : `no presets are configured in ${where}`;
  return usageError('unknown_preset', `unknown preset '${preset}'${meantNote(preset, names)}; ${known}`, { presets: names });
}
