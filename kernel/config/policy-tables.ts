/**
 * The policy tables of a config and the policies plan layers each into: a command reads what a
 * table's keys do through those, as plan would, rather than from the table alone.
 */
import type { PolicyPatch } from '../../schemas/generated/types.js';
import type { LoadedConfig, LoadedConfigFile } from './load-config.js';
import { filesOf, type ResolveOptions } from './resolve-config.js';

export interface PolicyTable {
  segments: string[];
  patch: PolicyPatch;
  /** What selects the table on its own: [policy] always applies, the others by their key. */
  options: ResolveOptions;
}

export function policyTables(file: LoadedConfigFile): PolicyTable[] {
  const { data } = file;
  return [
    ...(data.policy ? [{ segments: ['policy'], patch: data.policy, options: {} }] : []),
    ...Object.entries((data.provider ?? {}) as Record<string, PolicyPatch>).map(([provider, patch]) => ({ segments: ['provider', provider], patch, options: { provider } })),
    ...Object.entries(data.presets ?? {}).map(([preset, patch]) => ({ segments: ['presets', preset], patch, options: { preset } })),
    ...Object.entries(data.sessions ?? {}).map(([session_id, patch]) => ({ segments: ['sessions', session_id], patch, options: { session_id } })),
  ];
}

/**
 * Every way plan layers `table`: a preset or session table over [policy] alone and over each
 * [provider.<id>] table, since which provider a plan is for is known only from its session.
 */
export function layeringsOf(loaded: LoadedConfig, table: PolicyTable): ResolveOptions[] {
  if (table.segments[0] !== 'presets' && table.segments[0] !== 'sessions') return [table.options];
  const providers = new Set(filesOf(loaded).flatMap((file) => Object.keys(file.data.provider ?? {})));
  return [table.options, ...[...providers].map((provider) => ({ ...table.options, provider }))];
}
