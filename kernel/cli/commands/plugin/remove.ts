import { Args } from '@oclif/core';
import type { PluginRemoveCommandResult } from '../../../../schemas/generated/types.js';
import { configFlag } from '../../../config/cli-flags.js';
import { loadConfigOrProblem, type LoadedConfig } from '../../../config/load-config.js';
import { removeBundle } from '../../../plugins/registry/install.js';
import { PluginRegistry } from '../../../plugins/registry/registry.js';
import { staleConfigReferences } from '../../../services/stale-config-references.js';
import { staleParamsReferences } from '../../../services/stale-params-references.js';
import { BaseCommand } from '../../base-command.js';

export default class PluginRemove extends BaseCommand<PluginRemoveCommandResult> {
  static override summary = 'Remove an installed plugin bundle (one version, or every version of an id).';
  static override description =
    'Drops the pin first, so the bundle is never used again, then deletes its files. Built-in bundles cannot be removed; install a bundle providing the same ids to replace one. ' +
    'A config key that still names what was removed (a strategy or scorer it served, a plugin pin into its copy, a strategy id its strategy_params hold) is warned about, naming its file and table: plan then refuses that table or runs another bundle. ' +
    "Which strategy_params are strategy ids each strategy's params_schema says, so the strategies they belong to are started to check them; one that cannot be checked is said once, never refused. " +
    "Keys are judged as plan layers their table: a strategy that a table's plugin pin, or a pin of a table below it, proposes for is not named.";
  static override examples = ['<%= config.bin %> <%= command.id %> keep-last-python', '<%= config.bin %> <%= command.id %> keep-last-python@0.1.0 --json'];
  static override args = {
    plugin: Args.string({ description: 'Id or id@version of an installed bundle.', required: true }),
  };
  static override flags = { config: configFlag };

  async run(): Promise<PluginRemoveCommandResult> {
    const { args, flags } = await this.parse(PluginRemove);
    const config = await configToCheck(flags.config, args.plugin);
    const registry = new PluginRegistry();
    const outcome = await removeBundle(registry, args.plugin);
    const warnings = 'loaded' in config ? [...staleConfigReferences(config.loaded, outcome.pins, registry), ...(await staleParamsReferences(config.loaded, outcome.pins, registry))] : [config.unreadable];
    for (const r of outcome.removed) this.say(`Removed ${r.id} ${r.version} (${r.path})`);
    for (const warning of warnings) this.note(`warning: ${warning}`);
    return { removed: outcome.removed, warnings };
  }
}

/**
 * A --config that cannot be read stops the command before anything is removed; a broken default
 * config only stops the check of what it names (loadConfigOrProblem).
 */
async function configToCheck(configPath: string | undefined, spec: string): Promise<{ loaded: LoadedConfig } | { unreadable: string }> {
  const config = await loadConfigOrProblem(configPath);
  return 'problem' in config ? { unreadable: `the config could not be read to check what still names ${spec}: ${config.problem.message}` } : config;
}
