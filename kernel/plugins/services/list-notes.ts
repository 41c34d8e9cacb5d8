import type { PluginListEntry } from '../../../schemas/generated/types.js';
import { pinTable } from '../registry/bundle-ref.js';

/**
 * The lines `plugin list` prints under its table for one bundle. Each names the bundle with its
 * source (and a pin with its directory): a config pin and an installed copy often share one
 * id@version, and a note must not pass for the other row's.
 */
export function listNotes(b: PluginListEntry): string[] {
  // A bundle whose manifest could not be read has no version to show.
  const name = `${b.id}${b.version ? `@${b.version}` : ''} (${b.source === 'config' ? `config, ${b.path}` : b.source})`;
  const notes: string[] = [];
  for (const use of b.pinned_in) {
    const table = `${pinTable(use)} of ${use.path}`;
    if (use.strategy === null) notes.push(`${name}: pinned by plugin in ${table}, but runs nothing there: that table does not resolve, or another proposer replaces the pin`);
    // A pin that fails admission still is the table's proposer: plan refuses the table rather than fall back.
    else if (b.status !== 'ok') notes.push(`${name}: pinned by plugin in ${table} for strategy ${use.strategy}; plan refuses that table while the pin is ${b.status}`);
    // Said as plan says it: the strategy may be nobody's choice there, only the default.
    else if (!b.provides.strategies.includes(use.strategy)) notes.push(`${name}: pinned by plugin in ${table}, where plan refuses it: the configured plugin ${b.id} does not serve strategy ${use.strategy}`);
    else notes.push(`${name}: runs strategy ${use.strategy} where ${table} applies, pinned there by plugin`);
  }
  for (const s of b.shadowed) {
    if (s.table === undefined) notes.push(`${name}: shadowed for ${s.kind} ${s.provided_id}: ${s.by} (installed, ${s.by_path}) serves it instead`);
    else notes.push(`${name}: shadowed for ${s.kind} ${s.provided_id} where ${s.table} applies: the config pin in ${s.by_path} proposes for it there`);
  }
  if (b.superseded_by) notes.push(`${name}: not used; ${b.superseded_by} serves what it provides`);
  if (b.error) notes.push(`${name}: ${b.error.message}`);
  return notes;
}
