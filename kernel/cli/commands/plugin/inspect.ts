import { Args, Flags } from '@oclif/core';
import type { PluginInspectCommandResult } from '../../../../schemas/generated/types.js';
import { inspectBundle } from '../../../plugins/services/inspect-bundle.js';
import { pinUseNote } from '../../../plugins/services/list-notes.js';
import { SHUTDOWN_WAIT_MS } from '../../../plugins/protocol/plugin-channel.js';
import { PluginRegistry } from '../../../plugins/registry/registry.js';
import { usageError } from '../../../errors.js';
import { printableText } from '../../../text/human.js';
import { configFlag } from '../../../config/cli-flags.js';
import { pinsForPluginCommand } from '../../../services/config-pins.js';
import { BaseCommand } from '../../base-command.js';

export default class PluginInspect extends BaseCommand<PluginInspectCommandResult> {
  static override summary = "Start a bundle, run its initialize handshake and show what it serves.";
  static override description =
    'The bundle is admitted again (every file hashed, the pin compared), started with its declared environment only, asked to initialize, ' +
    'and shut down. Shows the protocol version it chose and its providers, strategies (with kinds and params schemas) and scorers. ' +
    'A bundle given as a directory runs only with --trusted-sha256 set to the manifest_sha256 that `plugin check` printed, or when `plugin add` pinned exactly its bytes (the directory it was added from). ' +
    'A bundle id names the bundle a config table pins (plugin = {manifest, trusted_sha256}) first, since a pin shadows the others, then an installed one, then a built-in. ' +
    'An argument that is both an existing path and a bundle id names the path, unless that path is a directory with no gobstopper-plugin.json.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> keep-last-python',
    '<%= config.bin %> <%= command.id %> ./my-bundle --trusted-sha256 <manifest_sha256> --json',
  ];
  static override args = {
    plugin: Args.string({ description: 'A bundle id (id or id@version) pinned in the config, installed or built in, or a bundle directory.', required: true }),
  };
  static override flags = {
    'trusted-sha256': Flags.string({ description: 'The manifest_sha256 a bundle directory must have to be run.' }),
    config: configFlag,
  };

  async run(): Promise<PluginInspectCommandResult> {
    const { args, flags } = await this.parse(PluginInspect);
    const trusted = flags['trusted-sha256'];
    if (trusted !== undefined && !/^[0-9a-f]{64}$/i.test(trusted)) {
      throw usageError('invalid_sha', `--trusted-sha256 must be the 64-hex manifest_sha256 that gobstopper plugin check ${args.plugin} prints`);
    }
    const { pins } = await pinsForPluginCommand(flags.config);
    const result = await inspectBundle(args.plugin, new PluginRegistry(), { trustedSha256: flags['trusted-sha256'], pins });
    this.say(`${result.id} ${result.version} (${result.source}, ${result.path})`);
    // What it serves is what plan would find once it started it: its handshake's strategies.
    const served = { id: result.id, status: 'ok' as const, strategies: result.strategies.map((s) => s.id) };
    for (const use of result.pinned_in ?? []) this.say(`  ${pinUseNote(use, served)}`);
    this.say(`  protocol version ${result.protocol_version}; capabilities ${result.capabilities.length ? result.capabilities.join(', ') : 'none'}`);
    this.say(`  limits: ${result.limits.timeout_ms} ms per call, ${result.limits.max_output_bytes} bytes per message, ${result.limits.max_stderr_bytes} bytes of stderr kept`);
    // Names and descriptions are the plugin's own words: one line each, so none passes for a line
    // of gobstopper's (a warning, another strategy).
    for (const p of result.providers) this.say(`  provider ${p.id}: ${printableText(p.display_name)}`);
    for (const s of result.strategies) {
      this.say(`  strategy ${s.id} (${s.kind}): ${printableText(s.description)}`);
      if (s.params_schema) this.say(`    params ${JSON.stringify(s.params_schema)}`);
    }
    for (const s of result.scorers) this.say(`  scorer ${s.id}: ${printableText(s.description)}`);
    if (result.providers.length + result.strategies.length + result.scorers.length === 0) this.say('  serves nothing');
    if (result.shutdown_answered === false) {
      this.note(`warning: the plugin did not answer shutdown (with a result, within ${SHUTDOWN_WAIT_MS} ms at most); every command that starts it waits that long before it ends (answer shutdown with null, then exit on the exit notification)`);
    }
    for (const u of result.unusable_params_schemas ?? []) this.note(`warning: ${u.problem}; plan and eval refuse to run it until the schema is fixed`);
    if (result.not_served?.length) this.note(`warning: the manifest provides ${result.not_served.join(', ')}, which the handshake did not offer; calls for ${result.not_served.length === 1 ? 'it fail' : 'them fail'}`);
    return result;
  }
}
