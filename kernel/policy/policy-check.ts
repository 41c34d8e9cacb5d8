/**
 * The numeric decision orchestrators ask for: given a provider, a context size and whether the session
 * is live, what should happen now. Reads no transcript and calls no provider.
 */
import type { ExternalProposer, PolicyCheckCommandResult, ResolvedPolicy } from '../../schemas/generated/types.js';
import { LIVE_SESSION_CONTROLS, type BuiltinProvider } from './provider-controls.js';

export interface PolicyCheckInput {
  provider: BuiltinProvider;
  context_tokens: number;
  session_active: boolean;
  policy: ResolvedPolicy;
  /** A command or pinned plugin a config table runs in the strategy bundle's place; plans are then named preset:<strategy>. */
  proposer?: ExternalProposer | null;
}

/**
 * Below the effective trigger nothing happens. Above it a live session is the provider's to compact
 * (only its runtime holds the loaded context); an idle one can be compacted from its transcript.
 */
export function policyCheck(input: PolicyCheckInput): PolicyCheckCommandResult {
  const { policy } = input;
  const over = input.context_tokens >= policy.effective_trigger_tokens;
  const action = !over ? 'none' : input.session_active ? 'provider_compact' : 'transcript_compact';
  return {
    action,
    strategy: input.proposer ? `preset:${policy.strategy}` : policy.strategy,
    provider: input.provider,
    trigger_tokens: policy.trigger_tokens,
    effective_trigger_tokens: policy.effective_trigger_tokens,
    floor_tokens: policy.floor_tokens,
    min_savings_tokens: policy.min_savings_tokens,
    block_tokens: policy.block_tokens,
    quota_pressure: policy.quota_pressure,
    context_tokens: input.context_tokens,
    session_active: input.session_active,
    control: action === 'provider_compact' ? LIVE_SESSION_CONTROLS[input.provider] : null,
    ...(input.proposer ? { proposer: input.proposer } : {}),
  };
}
