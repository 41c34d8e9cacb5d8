import { tableName } from '../../config/schema-messages.js';
import type { Capability, ConfigPinUse, PluginManifest, PluginProvides, PluginRef } from '../../../schemas/generated/types.js';

export type ProvidedKind = 'provider' | 'strategy' | 'scorer';

/**
 * Where a bundle came from. An installed bundle shadows a built-in for the ids both provide; a
 * config pin only for the strategy its table runs, where that table applies.
 */
export type BundleSource = 'config' | 'installed' | 'builtin';

/** A bundle the registry knows about, before it is (re-)admitted for use. */
export interface BundleRef {
  source: BundleSource;
  root: string;
  id: string;
  version: string;
  provides: PluginProvides;
  capabilities: Capability[];
  /** The manifest sha256 the bundle must still have; null for built-ins, which ship with gobstopper. */
  pinnedSha256: string | null;
}

/** A config file's `plugin` key: what it pins, and the table that pins it. */
export type ConfigPin = PluginRef & ConfigPinUse;

/** What `plugin list` and `inspect` show of a pin: where it is, not what it pins. */
export function pinUse({ path, table, strategy, provider }: ConfigPin): ConfigPinUse {
  return provider === undefined ? { path, table, strategy } : { path, table, strategy, provider };
}

/** The pinning table as a use layers it: a preset or session table may be layered over a provider's. */
export function pinTable(use: ConfigPinUse): string {
  return use.provider === undefined ? use.table : `${use.table} over ${tableName(['provider', use.provider])}`;
}

export function providesOf(manifest: PluginManifest): PluginProvides {
  return {
    providers: [...(manifest.provides.providers ?? [])],
    strategies: [...(manifest.provides.strategies ?? [])],
    scorers: [...(manifest.provides.scorers ?? [])],
  };
}

export function providedIds(provides: PluginProvides, kind: ProvidedKind): string[] {
  return kind === 'provider' ? provides.providers : kind === 'strategy' ? provides.strategies : provides.scorers;
}

export const bundleLabel = (ref: { id: string; version: string }) => `${ref.id}@${ref.version}`;
