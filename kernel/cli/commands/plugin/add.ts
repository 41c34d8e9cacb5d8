import { Args } from '@oclif/core';
import type { PluginAddCommandResult } from '../../../../schemas/generated/types.js';
import { describeProvides } from '../../../plugins/services/describe.js';
import { installBundle } from '../../../plugins/registry/install.js';
import { providesOf } from '../../../plugins/registry/bundle-ref.js';
import { PluginRegistry } from '../../../plugins/registry/registry.js';
import { BaseCommand } from '../../base-command.js';
import { usageError } from '../../../errors.js';

export default class PluginAdd extends BaseCommand<PluginAddCommandResult> {
  static override summary = 'Add a plugin bundle from a directory, a .tgz or an npm package.';
  static override description =
    'The bundle is admitted where it is (manifest schema, engines range, every file declared and hashed, no links, size caps), ' +
    'copied into $XDG_DATA_HOME/gobstopper/plugins/<id>/<version>/, admitted again there, and pinned by the SHA-256 of its manifest. ' +
    'No code of the bundle runs. A bundle that provides the same strategy, provider or scorer id as a built-in replaces the built-in for that id; its own id must differ from every built-in bundle\'s. ' +
    'An installed id@version with different content is never overwritten: remove it first.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> ./examples/plugins/keep-last-python',
    '<%= config.bin %> <%= command.id %> ./my-strategy-1.0.0.tgz',
    '<%= config.bin %> <%= command.id %> @acme/gobstopper-strategy@1.2.0 --json',
  ];
  static override args = {
    source: Args.string({ description: 'A bundle directory (or its gobstopper-plugin.json), a .tgz of one, or an npm package spec.', required: true }),
  };

  async run(): Promise<PluginAddCommandResult> {
    const { args } = await this.parse(PluginAdd);
    // An empty source would otherwise read as the current directory.
    if (args.source.trim() === '') throw usageError('bad_source', 'the bundle source is empty; give a bundle directory, its gobstopper-plugin.json, a .tgz or an npm package spec');
    const registry = new PluginRegistry();
    const outcome = await installBundle(registry, args.source);
    const { manifest } = outcome.bundle;
    const capabilities = manifest.capabilities ?? [];
    const result: PluginAddCommandResult = {
      id: manifest.id,
      version: manifest.version,
      path: outcome.bundle.root,
      source_kind: outcome.sourceKind,
      provides: providesOf(manifest),
      capabilities,
      network: capabilities.includes('network'),
      read_content: capabilities.includes('read_content'),
      manifest_sha256: outcome.bundle.manifestSha256,
      already_installed: outcome.alreadyInstalled,
      shadows: outcome.shadows,
    };
    this.say(`${outcome.alreadyInstalled ? 'Already installed' : 'Added'} ${manifest.id} ${manifest.version}: ${describeProvides(result.provides)}`);
    this.say(`  at ${result.path}`);
    if (result.network) this.say('  ! NETWORK: this bundle says it talks to the network.');
    if (result.read_content) this.say('  ! CONTENT: this bundle may read transcript content (host/read_items).');
    if (!result.network && !result.read_content) this.say('  declares no network use and asks for no transcript content');
    // Declarations are what the host can hold a plugin to over the protocol; the process itself
    // runs with the user's own permissions, so the note says what trusting a bundle means.
    this.say('  it runs as you: add only bundles you would run yourself');
    for (const s of result.shadows) this.say(`  replaces built-in ${s.builtin} for ${s.kind} ${s.provided_id}`);
    this.say(`  pinned manifest_sha256 ${result.manifest_sha256}`);
    return result;
  }
}
