import type { PluginListCommandResult } from '../../../../schemas/generated/types.js';
import { configFlag } from '../../../config/cli-flags.js';
import { describeProvides } from '../../../plugins/services/describe.js';
import { listBundles } from '../../../plugins/services/list-bundles.js';
import { listNotes } from '../../../plugins/services/list-notes.js';
import { PluginRegistry } from '../../../plugins/registry/registry.js';
import { pinsForPluginCommand } from '../../../services/config-pins.js';
import { BaseCommand } from '../../base-command.js';

export default class PluginList extends BaseCommand<PluginListCommandResult> {
  static override summary = 'List plugin bundles pinned in the config, built in and installed, and what they provide.';
  static override description =
    'Every bundle is admitted again (all files hashed, pins compared), so a damaged or changed bundle shows as damaged with the reason. ' +
    'A bundle a config table pins with plugin = {manifest, trusted_sha256} is listed with source config and the tables that pin it; ' +
    'it proposes for the strategy its table runs, so that strategy of a built-in or installed bundle is marked as served by the pin there. ' +
    'A built-in id that an installed bundle also provides is served by the installed bundle; such built-ins are marked. ' +
    'With several versions of one bundle installed, each id is served by the newest version (by semver) that provides it; a version that serves no id is marked as not used. ' +
    'Each note below the table names its bundle as id@version with its source (and a pin with its directory), since a pin and an installed copy may share one id@version.';
  static override examples = ['<%= config.bin %> <%= command.id %>', '<%= config.bin %> <%= command.id %> --json'];
  static override flags = { config: configFlag };

  async run(): Promise<PluginListCommandResult> {
    const { flags } = await this.parse(PluginList);
    const { pins, problem } = await pinsForPluginCommand(flags.config);
    const listed = listBundles(new PluginRegistry(), problem === null ? pins() : []);
    // The bundles on disk are listed all the same; only the config's own pins are missing.
    const result = problem === null ? listed : { ...listed, warnings: [`the config could not be read, so no bundle it pins is listed: ${problem}`] };
    for (const warning of result.warnings ?? []) this.note(`warning: ${warning}`);
    if (result.bundles.length === 0) {
      this.say(`No plugin bundles: none built in under ${result.builtin_dir}, none installed under ${result.installed_dir}.`);
      return result;
    }
    this.sayTable(
      [{ header: 'ID', fit: 'end' }, { header: 'VERSION' }, { header: 'SOURCE' }, { header: 'STATUS' }, { header: 'PROVIDES', fit: 'end' }],
      result.bundles.map((b) => [b.id, b.version, b.source, b.status, describeProvides(b.provides)]),
    );
    for (const note of result.bundles.flatMap(listNotes)) this.say(note);
    return result;
  }
}
