import { Args } from '@oclif/core';
import type { PluginCheckCommandResult } from '../../../../schemas/generated/types.js';
import { checkBundleSource } from '../../../plugins/services/check-bundle.js';
import { describeProvides } from '../../../plugins/services/describe.js';
import { PluginRegistry } from '../../../plugins/registry/registry.js';
import { configFlag } from '../../../config/cli-flags.js';
import { pinsForPluginCommand } from '../../../services/config-pins.js';
import { BaseCommand } from '../../base-command.js';

export default class PluginCheck extends BaseCommand<PluginCheckCommandResult> {
  static override summary = 'Admit a bundle without running it and print its manifest_sha256.';
  static override description =
    'Checks the manifest (schema, unknown fields, semver, engines range) and every file of the bundle (declared, regular, no links, ' +
    'inside the bundle, hash matching, count and size caps). Never runs any of its code. Give a directory, a gobstopper-plugin.json, ' +
    'a .tgz as plugin add takes one (unpacked into a temporary directory, checked, and removed), ' +
    'or the id of a bundle pinned in the config, installed or built in (id or id@version) to re-check it in place.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> ./examples/plugins/keep-last-jq',
    '<%= config.bin %> <%= command.id %> /abs/path/gobstopper-plugin.json --json',
    '<%= config.bin %> <%= command.id %> keep-last-python',
  ];
  static override args = {
    bundle: Args.string({ description: 'A bundle directory, its gobstopper-plugin.json, a .tgz, or the id of a bundle pinned in the config, installed or built in.', required: true }),
  };
  static override flags = { config: configFlag };

  async run(): Promise<PluginCheckCommandResult> {
    const { args, flags } = await this.parse(PluginCheck);
    const { pins } = await pinsForPluginCommand(flags.config);
    const result = await checkBundleSource(args.bundle, new PluginRegistry(), pins);
    this.say(`${result.id} ${result.version}: admitted (${result.files} files, ${result.bytes} bytes); no code was run`);
    this.say(`  provides ${describeProvides(result.provides)}`);
    this.say(`  capabilities ${result.capabilities.length ? result.capabilities.join(', ') : 'none'}; ${result.trusted ? 'trusted (built in or pinned)' : 'not pinned'}`);
    this.say(`manifest_sha256 ${result.manifest_sha256}`);
    if (result.add_refusal) this.note(`warning: plugin add would refuse it: ${result.add_refusal.message}`);
    return result;
  }
}

