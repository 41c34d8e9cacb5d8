import { Flags } from '@oclif/core';
import type { PolicyCheckCommandResult } from '../../../schemas/generated/types.js';
import { BaseCommand } from '../base-command.js';
import { configFlag, presetFlag, providerIdOf, quotaPressureFlag } from '../../config/cli-flags.js';
import { resolveForCommand } from '../../config/resolve-for-command.js';
import { toResolvedPolicy } from '../../policy/effective-policy.js';
import { PluginRegistry } from '../../plugins/registry/registry.js';
import { policyCheck } from '../../policy/policy-check.js';
import { proposerName } from '../../policy/explain.js';
import { requirePolicyIds } from '../../services/policy-ids.js';
import { checkStrategyParamsEarly } from '../../services/strategy-params-check.js';
import { BUILTIN_PROVIDERS, type BuiltinProvider } from '../../policy/provider-controls.js';
import { isQuotaPressure, pressureHoldNote } from '../../policy/quota.js';
import { MAX_CONTEXT_TOKENS } from '../../policy/bounds.js';

export default class PolicyCheck extends BaseCommand<PolicyCheckCommandResult> {
  static override summary = 'Decide what to do at a given context size, for orchestrators; reads no transcript.';
  static override description =
    'Below the effective trigger (trigger_tokens scaled by quota pressure, high pressure stopping min_savings_tokens above the floor; both are in the JSON) the action is none. At or above it, a live session ' +
    '(--session-active) gets provider_compact with the control to invoke (Codex thread/compact/start, Claude Code /compact or relaunch --autocompact, since only the person at its prompt can type /compact; Devin /compact); ' +
    'an idle session gets transcript_compact, which gobstopper apply performs on a fork. The trigger comes from your config: ' +
    '[policy], then [provider.<id>], then the --preset table; when a table there runs a legacy command or a pinned plugin, strategy reads preset:<strategy> (as plan names such plans) and the JSON\'s proposer names it. Adaptive tuning (adaptive = true) is not applied: it reads the transcript, which this command never does; plan and tune show the adaptive trigger.';
  static override examples = [
    '<%= config.bin %> policy-check --provider codex --context-tokens 300000 --session-active --json',
    '<%= config.bin %> policy-check --provider claude_code --context-tokens 180000 --quota-pressure high',
  ];
  static override flags = {
    provider: Flags.string({
      summary: "The session's provider (claude is taken for claude_code).",
      options: [...BUILTIN_PROVIDERS, 'claude'],
      required: true,
    }),
    'context-tokens': Flags.integer({ summary: 'Current context size, as the provider reports it.', min: 0, max: MAX_CONTEXT_TOKENS, required: true, helpValue: '<tokens>' }),
    'session-active': Flags.boolean({ summary: 'The session is live in its client right now.', default: false }),
    'quota-pressure': quotaPressureFlag,
    preset: presetFlag,
    config: configFlag,
  };

  async run(): Promise<PolicyCheckCommandResult> {
    const { flags } = await this.parse(PolicyCheck);
    const pressure = flags['quota-pressure'];
    const provider = providerIdOf(flags.provider) as BuiltinProvider;
    const { resolved } = await resolveForCommand({
      configPath: flags.config,
      provider,
      preset: flags.preset,
      flags: { quota_pressure: isQuotaPressure(pressure) ? pressure : undefined },
    });
    const registry = new PluginRegistry({ env: process.env });
    requirePolicyIds(registry, resolved);
    await checkStrategyParamsEarly(resolved);
    const result = policyCheck({
      provider,
      context_tokens: flags['context-tokens'],
      session_active: flags['session-active'],
      policy: toResolvedPolicy(resolved.values),
      proposer: resolved.external,
    });
    const scaled = result.effective_trigger_tokens === result.trigger_tokens ? '' : ` effective_trigger_tokens=${result.effective_trigger_tokens}`;
    // One key=value per word: a value with spaces (Claude Code's control) is quoted as JSON.
    const control = result.control === null ? '' : ` control=${/\s/.test(result.control) ? JSON.stringify(result.control) : result.control}`;
    this.say(`action=${result.action} strategy=${result.strategy} trigger_tokens=${result.trigger_tokens}${scaled}${control}`);
    const notes: string[] = [];
    // A script reading only `strategy` would not know a user's script writes the edits.
    if (result.proposer) notes.push(`plans come from ${proposerName(result.proposer)}, not from a strategy bundle`);
    // Otherwise a script sees effective_trigger_tokens above trigger × 0.7 and no reason for it.
    const held = pressureHoldNote(result);
    if (held !== null) notes.push(held);
    // The decision is the policy's either way; say when nothing here could carry it out.
    if (result.action === 'transcript_compact' && !registry.declared('provider').includes(provider)) {
      notes.push(`no installed provider bundle reads ${provider} sessions, so gobstopper apply cannot act on this`);
    }
    // Adaptive tuning needs the transcript (its window and recent yields), which this never reads.
    if (resolved.values.adaptive) {
      notes.push('adaptive is on: plan and apply tune the trigger and floor per session from its transcript, which policy-check does not read (gobstopper tune <session> shows them); this decision uses the configured values');
    }
    for (const note of notes) this.note(`note: ${note}`);
    return notes.length > 0 ? { ...result, notes } : result;
  }
}
