import { Args } from '@oclif/core';
import type { PluginRemoveCommandResult } from '../../../../schemas/generated/types.js';
import { removeBundle } from '../../../plugins/registry/install.js';
import { PluginRegistry } from '../../../plugins/registry/registry.js';
import { BaseCommand } from '../../base-command.js';

export default class PluginRemove extends BaseCommand<PluginRemoveCommandResult> {
  static override summary = 'Remove an installed plugin bundle (one version, or every version of an id).';
  static override description = 'Drops the pin first, so the bundle is never used again, then deletes its files. Built-in bundles cannot be removed; install a bundle providing the same ids to replace one.';
  static override examples = ['<%= config.bin %> <%= command.id %> keep-last-python', '<%= config.bin %> <%= command.id %> keep-last-python@0.1.0 --json'];
  static override args = {
    plugin: Args.string({ description: 'Id or id@version of an installed bundle.', required: true }),
  };

  async run(): Promise<PluginRemoveCommandResult> {
    const { args } = await this.parse(PluginRemove);
    const result = await removeBundle(new PluginRegistry(), args.plugin);
    for (const r of result.removed) this.say(`Removed ${r.id} ${r.version} (${r.path})`);
    return result;
  }
}
