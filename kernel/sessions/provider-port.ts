/**
 * What the session layer needs from a provider plugin. The plugin host's provider clients satisfy
 * it; tests can pass plain objects.
 */
import type * as T from '../../schemas/generated/types.js';

export interface ProviderPort {
  readonly id: string;
  discover(params: Omit<T.ProviderDiscoverParams, 'provider_id'>): Promise<T.ProviderDiscoverResult>;
  identify(params: Omit<T.ProviderIdentifyParams, 'provider_id'>): Promise<T.ProviderIdentifyResult>;
}

/** Per-provider home overrides (`--claude-home`, `--codex-home`, `--provider-home id=path`). */
export type ProviderHomes = Record<string, string | undefined>;
