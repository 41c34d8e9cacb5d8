import type { ConfigPinUse, PluginListEntry } from '../../../schemas/generated/types.js';
import { pinTable } from '../registry/bundle-ref.js';

/** What a note about one pin needs to know of the pinned bundle. */
export interface PinnedBundle {
  id: string;
  status: PluginListEntry['status'];
  /** The strategies it serves: its manifest's before it runs, its handshake's once it has. */
  strategies: readonly string[];
}

/**
 * What one table's pin does, said as plan would act on it; `plugin list` and `plugin inspect` both
 * print it, so neither promises a strategy plan refuses.
 */
export function pinUseNote(use: ConfigPinUse, bundle: PinnedBundle): string {
  const table = `${pinTable(use)} of ${use.path}`;
  if (use.strategy === null) return `pinned by plugin in ${table}, but runs nothing there: that table does not resolve, or another proposer replaces the pin`;
  // A pin that fails admission still is the table's proposer: plan refuses the table rather than fall back.
  if (bundle.status !== 'ok') return `pinned by plugin in ${table} for strategy ${use.strategy}; plan refuses that table while the pin is ${bundle.status}`;
  // Said as plan says it: the strategy may be nobody's choice there, only the default.
  if (!bundle.strategies.includes(use.strategy)) return `pinned by plugin in ${table}, where plan refuses it: the configured plugin ${bundle.id} does not serve strategy ${use.strategy}`;
  return `runs strategy ${use.strategy} where ${table} applies, pinned there by plugin`;
}

/**
 * The lines `plugin list` prints under its table for one bundle. Each names the bundle with its
 * source (and a pin with its directory): a config pin and an installed copy often share one
 * id@version, and a note must not pass for the other row's.
 */
export function listNotes(b: PluginListEntry): string[] {
  // A bundle whose manifest could not be read has no version to show.
  const name = `${b.id}${b.version ? `@${b.version}` : ''} (${b.source === 'config' ? `config, ${b.path}` : b.source})`;
  const notes = b.pinned_in.map((use) => `${name}: ${pinUseNote(use, { id: b.id, status: b.status, strategies: b.provides.strategies })}`);
  for (const s of b.shadowed) {
    if (s.table === undefined) notes.push(`${name}: shadowed for ${s.kind} ${s.provided_id}: ${s.by} (installed, ${s.by_path}) serves it instead`);
    else notes.push(`${name}: shadowed for ${s.kind} ${s.provided_id} where ${s.table} applies: the config pin in ${s.by_path} proposes for it there`);
  }
  if (b.superseded_by) notes.push(`${name}: not used; ${b.superseded_by} serves what it provides`);
  if (b.error) notes.push(`${name}: ${b.error.message}`);
  return notes;
}
