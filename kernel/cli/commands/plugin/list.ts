import type { PluginListCommandResult } from '../../../../schemas/generated/types.js';
import { describeProvides } from '../../../plugins/services/describe.js';
import { listBundles } from '../../../plugins/services/list-bundles.js';
import { PluginRegistry } from '../../../plugins/registry/registry.js';
import { BaseCommand } from '../../base-command.js';

export default class PluginList extends BaseCommand<PluginListCommandResult> {
  static override summary = 'List built-in and installed plugin bundles and what they provide.';
  static override description =
    'Every bundle is admitted again (all files hashed, pins compared), so a damaged or changed bundle shows as damaged with the reason. ' +
    'A built-in id that an installed bundle also provides is served by the installed bundle; such built-ins are marked. ' +
    'With several versions of one bundle installed, each id is served by the newest version (by semver) that provides it; a version that serves no id is marked as not used.';
  static override examples = ['<%= config.bin %> <%= command.id %>', '<%= config.bin %> <%= command.id %> --json'];

  async run(): Promise<PluginListCommandResult> {
    await this.parse(PluginList);
    const result = listBundles(new PluginRegistry());
    if (result.bundles.length === 0) {
      this.say(`No plugin bundles: none built in under ${result.builtin_dir}, none installed under ${result.installed_dir}.`);
      return result;
    }
    this.sayTable(
      [{ header: 'ID', fit: 'end' }, { header: 'VERSION' }, { header: 'SOURCE' }, { header: 'STATUS' }, { header: 'PROVIDES', fit: 'end' }],
      result.bundles.map((b) => [b.id, b.version, b.source, b.status, describeProvides(b.provides)]),
    );
    for (const b of result.bundles) {
      for (const s of b.shadowed) this.say(`${b.id}: ${s.kind} ${s.provided_id} is served by ${s.by} instead`);
      if (b.superseded_by) this.say(`${b.id} ${b.version}: not used; ${b.superseded_by} serves what it provides`);
      if (b.error) this.say(`${b.id} ${b.version}: ${b.error.message}`);
    }
    return result;
  }
}
