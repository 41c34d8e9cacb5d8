import type { PluginListCommandResult } from '../../../../schemas/generated/types.js';
import { configFlag } from '../../../config/cli-flags.js';
import { loadConfig } from '../../../config/load-config.js';
import { describeProvides } from '../../../plugins/services/describe.js';
import { listBundles } from '../../../plugins/services/list-bundles.js';
import { PluginRegistry } from '../../../plugins/registry/registry.js';
import { configPins } from '../../../services/config-pins.js';
import { BaseCommand } from '../../base-command.js';

export default class PluginList extends BaseCommand<PluginListCommandResult> {
  static override summary = 'List plugin bundles pinned in the config, built in and installed, and what they provide.';
  static override description =
    'Every bundle is admitted again (all files hashed, pins compared), so a damaged or changed bundle shows as damaged with the reason. ' +
    'A bundle a config table pins with plugin = {manifest, trusted_sha256} is listed with source config and the tables that pin it; ' +
    'it proposes for the strategy its table runs, so that strategy of a built-in or installed bundle is marked as served by the pin there. ' +
    'A built-in id that an installed bundle also provides is served by the installed bundle; such built-ins are marked. ' +
    'With several versions of one bundle installed, each id is served by the newest version (by semver) that provides it; a version that serves no id is marked as not used.';
  static override examples = ['<%= config.bin %> <%= command.id %>', '<%= config.bin %> <%= command.id %> --json'];
  static override flags = { config: configFlag };

  async run(): Promise<PluginListCommandResult> {
    const { flags } = await this.parse(PluginList);
    const pins = configPins(await loadConfig({ configPath: flags.config }));
    const result = listBundles(new PluginRegistry(), pins);
    if (result.bundles.length === 0) {
      this.say(`No plugin bundles: none built in under ${result.builtin_dir}, none installed under ${result.installed_dir}.`);
      return result;
    }
    this.sayTable(
      [{ header: 'ID', fit: 'end' }, { header: 'VERSION' }, { header: 'SOURCE' }, { header: 'STATUS' }, { header: 'PROVIDES', fit: 'end' }],
      result.bundles.map((b) => [b.id, b.version, b.source, b.status, describeProvides(b.provides)]),
    );
    for (const b of result.bundles) {
      for (const use of b.pinned_in) this.say(`${b.id}: pinned by plugin in ${use.table} of ${use.path}${use.strategy === null ? '' : `, proposing for strategy ${use.strategy}`}`);
      for (const s of b.shadowed) {
        // A pin may carry the id@version of the installed copy it shadows: the sources tell them apart.
        if (s.table === undefined) this.say(`${b.id}: ${s.kind} ${s.provided_id} is served by ${s.by} instead`);
        else this.say(`${b.id} (${b.source}): ${s.kind} ${s.provided_id} is served by the config pin ${s.by} instead where ${s.table} applies`);
      }
      if (b.superseded_by) this.say(`${b.id} ${b.version}: not used; ${b.superseded_by} serves what it provides`);
      // A bundle whose manifest could not be read has no version to show.
      if (b.error) this.say(`${b.id}${b.version ? ` ${b.version}` : ''}: ${b.error.message}`);
    }
    return result;
  }
}
