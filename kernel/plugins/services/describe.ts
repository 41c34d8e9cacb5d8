import type { PluginProvides } from '../../../schemas/generated/types.js';

/** "strategies keep_last_py; scorers heuristic", or "nothing" — for one-line human output. */
export function describeProvides(provides: PluginProvides): string {
  const parts: string[] = [];
  if (provides.providers.length) parts.push(`provider${provides.providers.length > 1 ? 's' : ''} ${provides.providers.join(', ')}`);
  if (provides.strategies.length) parts.push(`strateg${provides.strategies.length > 1 ? 'ies' : 'y'} ${provides.strategies.join(', ')}`);
  if (provides.scorers.length) parts.push(`scorer${provides.scorers.length > 1 ? 's' : ''} ${provides.scorers.join(', ')}`);
  return parts.length ? parts.join('; ') : 'nothing';
}
