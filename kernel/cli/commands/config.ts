import { Args, Flags } from '@oclif/core';
import type { ConfigCommandResult } from '../../../schemas/generated/types.js';
import { GobstopperError, usageError } from '../../errors.js';
import { PluginRegistry } from '../../plugins/registry/registry.js';
import { requirePolicyIds } from '../../services/policy-ids.js';
import { configProblems } from '../../services/config-problems.js';
import { strategyParamsChecker } from '../../services/strategy-params-check.js';
import { withRuntime } from '../../services/runtime.js';
import { resolveSession } from '../../sessions/selector.js';
import { BaseCommand } from '../base-command.js';
import { homeFlags, providerHomes } from '../session-flags.js';
import { configFlag, presetFlag, providerFlag, quotaPressureFlag } from '../../config/cli-flags.js';
import { inertSettings } from '../../config/inert-keys.js';
import { resolveForCommand } from '../../config/resolve-for-command.js';
import { describeSource, unappliedSessionNote, type ResolvedConfig } from '../../config/resolve-config.js';
import { toResolvedPolicy } from '../../policy/effective-policy.js';
import { isQuotaPressure, pressureHoldNote } from '../../policy/quota.js';

/** What an unset key means, where it is not simply "nothing". */
const UNSET_MEANS: Record<string, string> = {
  scorer: ': the built-in heuristic scorer scores',
  keep_score_threshold: ': no score cutoff, the lowest-scored stale outputs go first',
};

/** Keys validated and shown like the others that nothing in this version acts on (the schema says so too). */
const NO_EFFECT: Record<string, string> = {
  apply_hold_secs: 'no effect in this version: nothing is edited in place',
  block_tokens: 'no effect in this version: no prompt hook ships (policy-check reports it)',
};

export default class Config extends BaseCommand<ConfigCommandResult> {
  static override summary = 'Show the resolved policy and where each value came from.';
  static override description =
    'Layers, later wins: built-in defaults, [policy], [provider.<id>], [presets.<name>] (with --preset), [sessions."<id>"] (with a session id), then flags. ' +
    'A session id, prefix or transcript path that matches a session on disk is read as plan reads it: its full id and its provider apply. An id that matches none is applied as written. ' +
    'Each table is read from the user config and then from the nearest project file, so a project refines the user table of the same name. ' +
    'Adaptive tuning needs the session transcript and is not applied here; see gobstopper tune.';
  static override examples = [
    '<%= config.bin %> config',
    '<%= config.bin %> config 01a08d7c-7b1e-4c55-9f3e-2b1f3a4c5d6e --provider codex',
    '<%= config.bin %> config --preset deep-work --json',
  ];
  static override args = {
    'session-id': Args.string({ description: 'A session id, unique prefix or transcript path; its [sessions."<id>"] table and provider apply.', required: false }),
  };
  static override flags = {
    provider: providerFlag,
    preset: presetFlag,
    config: configFlag,
    strategy: Flags.string({ summary: 'Override the strategy (drops a configured command, and a pinned plugin unless it serves that strategy).', helpValue: '<id>' }),
    trigger: Flags.integer({ summary: 'Override trigger_tokens.', min: 1, max: 10_000_000, helpValue: '<tokens>' }),
    floor: Flags.integer({ summary: 'Override floor_tokens.', min: 0, max: 10_000_000, helpValue: '<tokens>' }),
    'quota-pressure': quotaPressureFlag,
    ...homeFlags,
  };

  async run(): Promise<ConfigCommandResult> {
    const { args, flags } = await this.parse(Config);
    const pressure = flags['quota-pressure'];
    const session = await this.findSession(args['session-id'], flags.provider, providerHomes(flags));
    const { loaded, resolved } = await resolveForCommand({
      configPath: flags.config,
      provider: session?.provider ?? flags.provider,
      session_id: session?.session_id ?? args['session-id'],
      preset: flags.preset,
      flags: {
        strategy: flags.strategy,
        trigger_tokens: flags.trigger,
        floor_tokens: flags.floor,
        quota_pressure: isQuotaPressure(pressure) ? pressure : undefined,
      },
    });
    const registry = new PluginRegistry({ env: process.env });
    requirePolicyIds(registry, resolved);
    // Parameters are checked against the schema the strategy declares, which takes starting it; the
    // other tables' problems are found with the same runtime, so no strategy is started twice.
    const params = strategyParamsChecker();
    let problems: string[];
    try {
      await params.check(resolved);
      problems = await configProblems(loaded, registry, params);
    } finally {
      await params.close();
    }
    const policy = toResolvedPolicy(resolved.values);
    const held = pressureHoldNote(policy);
    const result: ConfigCommandResult = {
      provider: resolved.provider,
      session_id: resolved.session_id,
      session_match: args['session-id'] === undefined ? null : session ? 'discovered' : 'as_given',
      preset: resolved.preset,
      config_files: resolved.files,
      policy,
      external: resolved.external,
      discovery: resolved.discovery,
      sources: resolved.sources,
      problems,
      unapplied_session_tables: resolved.unapplied_session_tables,
      inert_settings: inertSettings(loaded),
      // Otherwise a script sees the effective trigger above trigger × 0.7 and no reason for it.
      ...(held === null ? {} : { notes: [held] }),
    };
    for (const file of resolved.files) this.say(`# ${file.scope} config: ${file.path}${file.loaded ? '' : ' (not present; defaults apply)'}`);
    if (result.session_id !== null) {
      const read = session ? `${session.provider} session ${session.session_id}` : `no session on disk matches ${args['session-id']}; its id is applied as written`;
      this.say(`# session: ${read}${sessionTableNote(resolved, result.session_id)}`);
    }
    const rows: Array<[string, unknown]> = [
      ...Object.entries(resolved.values).filter(([k]) => k !== 'strategy_params'),
      ['strategy_params', resolved.values.strategy_params],
    ];
    if (resolved.external?.kind === 'legacy_command') rows.push(['command', resolved.external.command], ['trusted_legacy_command', true]);
    if (resolved.external?.kind === 'plugin') rows.push(['plugin', { manifest: resolved.external.manifest, trusted_sha256: resolved.external.trusted_sha256 }]);
    for (const [key, value] of rows) {
      const from = describeSource(key, resolved.sources[key])?.slice(key.length + 2) ?? '';
      const source = NO_EFFECT[key] ? `${from}; ${NO_EFFECT[key]}` : from;
      // Lines a person may paste into a [policy] table: an unset key is a comment, not `= null`.
      this.say(value === null || value === undefined ? `# ${key} is unset${UNSET_MEANS[key] ?? ''}  # ${source}` : `${key} = ${tomlValue(value)}  # ${source}`);
    }
    this.say(`# effective_trigger_tokens = ${policy.effective_trigger_tokens}  (${held ?? `trigger_tokens under ${policy.quota_pressure} quota pressure`})`);
    if (policy.adaptive) {
      this.say(`# adaptive = true: plan tunes trigger_tokens and floor_tokens per session from its window and recent yields; gobstopper tune ${result.session_id ?? '<session>'} shows the values it uses`);
    }
    if (resolved.external) this.say(`# plans come from ${resolved.external.table} and are named preset:${policy.strategy}`);
    for (const setting of result.inert_settings) this.say(`# accepted from the original tool's configuration, no effect here: ${setting}`);
    for (const problem of result.problems) this.note(`warning: ${problem} (refused when that table is used)`);
    return result;
  }

  /**
   * The session an id or prefix names, as plan finds it; null when none matches (its table is then
   * applied by the id as written). A provider flag that contradicts the session is refused.
   */
  private async findSession(selector: string | undefined, provider: string | undefined, homes: ReturnType<typeof providerHomes>) {
    if (selector === undefined) return null;
    const found = await withRuntime({ homes }, async (rt) => (await resolveSession(selector, await rt.providers(), rt.homes)).session).catch((error: unknown) => {
      // A sub-agent thread's id names no session either: its table is applied by the id as written.
      if (error instanceof GobstopperError && (error.code === 'session_not_found' || error.code === 'not_a_session')) return null;
      throw error;
    });
    if (found && provider !== undefined && provider !== found.provider) {
      throw usageError('provider_mismatch', `${found.session_id} is a ${found.provider} session; --provider ${provider} contradicts it`);
    }
    return found;
  }
}

/**
 * What the session's own table does in this run. Whether a table was layered is asked of the
 * resolution, not read off the final sources: flags may override every key the table sets.
 */
function sessionTableNote(resolved: ResolvedConfig, sessionId: string): string {
  const table = `[sessions.${JSON.stringify(sessionId)}]`;
  const keys = resolved.session_table_keys;
  // A loose table is named beside the exact one too: what it sets is lost either way.
  const loose = unappliedSessionNote(resolved);
  if (keys === null) return `; no ${table} table sets anything${loose === null ? '' : ` (${loose})`}`;
  const also = loose === null ? '' : `; ${loose}`;
  if (keys.length === 0) return `; its ${table} table sets no policy key${also}`;
  const overridden = keys.filter((key) => resolved.sources[key]?.layer === 'flag');
  if (overridden.length === keys.length) return `; flags override every key its ${table} table sets (${overridden.join(', ')})${also}`;
  return (overridden.length === 0 ? '' : `; flags override ${overridden.join(', ')} of its ${table} table`) + also;
}

/**
 * A value as TOML writes it (JSON's strings are valid TOML basic strings). Tables go inline, so the
 * line stays one key of [policy]; smol-toml's stringify would open a [strategy_params] table instead.
 */
function tomlValue(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(tomlValue).join(', ')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).map(([k, v]) => `${/^[A-Za-z0-9_-]+$/.test(k) ? k : JSON.stringify(k)} = ${tomlValue(v)}`);
    return entries.length === 0 ? '{}' : `{ ${entries.join(', ')} }`;
  }
  return typeof value === 'string' ? JSON.stringify(value) : String(value);
}
