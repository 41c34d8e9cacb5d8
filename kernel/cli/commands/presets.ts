import type { PolicyPatch, PresetEntry, PresetsCommandResult } from '../../../schemas/generated/types.js';
import { BaseCommand } from '../base-command.js';
import { configFlag } from '../../config/cli-flags.js';
import { loadConfig, type LoadedConfig } from '../../config/load-config.js';
import { configFileRefs } from '../../config/resolve-config.js';
import { PluginRegistry } from '../../plugins/registry/registry.js';
import { configProblems } from '../../services/config-problems.js';

export default class Presets extends BaseCommand<PresetsCommandResult> {
  static override summary = 'List the named presets in your configuration.';
  static override description =
    'A preset is a [presets.<name>] table of policy keys (strategy, trigger_tokens, floor_tokens, ...). ' +
    'Select one with --preset (plan, apply, watch, config, policy-check, explain, tune, eval, bench, eval-study); it applies after [policy] and [provider.<id>] and before [sessions."<id>"]. ' +
    'Presets come from the user config ($XDG_CONFIG_HOME/gobstopper/config.toml or --config) and the nearest project file ' +
    '(.gobstopperrc.toml, gobstopper.config.toml or .config/gobstopper.toml); a project preset of the same name overrides the user one key by key.';
  static override examples = ['<%= config.bin %> presets', '<%= config.bin %> presets --json', '<%= config.bin %> presets --config ./team.toml'];
  static override flags = { config: configFlag };

  async run(): Promise<PresetsCommandResult> {
    const { flags } = await this.parse(Presets);
    const loaded = await loadConfig({ configPath: flags.config });
    const result: PresetsCommandResult = { config_files: configFileRefs(loaded), presets: listPresets(loaded), problems: await configProblems(loaded, new PluginRegistry({ env: process.env })) };
    for (const problem of result.problems) this.note(`warning: ${problem} (refused when that table is used)`);
    if (result.presets.length === 0) {
      this.say(`No presets in ${result.config_files.map((f) => f.path).join(' or ')}.`);
      this.note('Add a [presets.<name>] table, for example:\n  [presets.deep-work]\n  strategy = "elide"\n  trigger_tokens = 150000\n  floor_tokens = 20000');
      return result;
    }
    for (const preset of result.presets) {
      const keys = Object.entries(preset.keys)
        .map(([k, v]) => `${k}=${formatValue(v)}`)
        .join(' ');
      // A preset in both files is the user's table refined by the project's: both are named.
      const where = preset.scope === 'both' ? `both: ${loaded.user.path} and ${preset.path}` : `${preset.scope}: ${preset.path}`;
      this.say(`${preset.name}  ${keys}  (${where})`);
    }
    return result;
  }
}

export function listPresets(loaded: LoadedConfig): PresetEntry[] {
  const byName = new Map<string, PresetEntry>();
  const files = loaded.project ? [loaded.user, loaded.project] : [loaded.user];
  for (const file of files) {
    for (const [name, patch] of Object.entries(file.data.presets ?? {})) {
      const earlier = byName.get(name);
      const keys: PolicyPatch = { ...(earlier?.keys ?? {}), ...patch };
      // As the layering does: parameters belong to the strategy they were written for, so a project
      // table that switches the strategy without its own leaves the user table's behind.
      const switched = earlier?.keys.strategy !== undefined && patch.strategy !== undefined && patch.strategy !== earlier.keys.strategy;
      if (switched && patch.strategy_params === undefined) delete keys.strategy_params;
      byName.set(name, { name, scope: earlier ? 'both' : file.scope, path: file.path, keys });
    }
  }
  return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
}

function formatValue(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : typeof value === 'object' ? JSON.stringify(value) : String(value);
}
