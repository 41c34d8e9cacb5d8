/** provider/identify and provider/usage: one path, judged and measured from its head and tail. */
import { invalidInput, type ProviderIdentifyParams, type ProviderIdentifyResult, type ProviderUsageParams, type ProviderUsageResult } from '../../../sdk/index.js';
import { describeRollout } from './describe.js';
import { absolutePath, statSource, toPluginError } from './source.js';

function describeOrThrow(path: string) {
  statSource(path);
  try {
    return describeRollout(path);
  } catch (error) {
    throw toPluginError(error, path);
  }
}

export function identify(params: ProviderIdentifyParams): ProviderIdentifyResult {
  const described = describeOrThrow(absolutePath(params.path));
  return described === null ? { matches: false, session: null } : { matches: true, session: described.session };
}

export function usage(params: ProviderUsageParams): ProviderUsageResult {
  const path = absolutePath(params.path);
  const described = describeOrThrow(path);
  if (described === null) throw invalidInput(`${path} is not a Codex rollout`);
  return { usage: described.usage ?? emptyUsage(), bytes_read: described.bytes_read };
}

function emptyUsage(): ProviderUsageResult['usage'] {
  return { context_tokens: 0, lifetime_input_tokens: 0, lifetime_cached_tokens: 0, context_state: 'absent', lifetime_scope: 'absent' };
}
