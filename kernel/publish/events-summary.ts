/** The `events` readout: counts over a time window and the newest events. */
import type { CompactionEvent, EventsCommandOutput, RetentionTally } from '../../schemas/generated/types.js';

export type { EventsCommandOutput };

function bump(counts: Record<string, number>, key: string): void {
  counts[key] = (counts[key] ?? 0) + 1;
}

function sorted(counts: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(counts).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)));
}

export interface SummaryOptions {
  since: number | null;
  tail: number;
  /** Only sessions whose id starts with this (any case). */
  session?: string;
}

export function summarizeEvents(all: CompactionEvent[], skipped: number, options: SummaryOptions): EventsCommandOutput {
  // Session ids are matched without regard to case, as recall, vault and history match them.
  const prefix = options.session?.toLowerCase();
  const events = all.filter((e) => (options.since === null || e.ts >= options.since) && (prefix === undefined || e.session_id.toLowerCase().startsWith(prefix)));
  const byOutcome: Record<string, number> = {};
  const byAction: Record<string, number> = {};
  const byStrategy: Record<string, number> = {};
  const byProvider: Record<string, number> = {};
  let applied = 0;
  let reclaimed = 0;
  const retentionAll: RetentionTally = { measured_events: 0, checks: 0, retained: 0, lexical: 0 };
  const retentionBy: Record<string, RetentionTally> = {};
  let first: number | null = null;
  let last: number | null = null;
  for (const e of events) {
    bump(byOutcome, e.outcome);
    bump(byAction, e.action);
    bump(byStrategy, e.strategy);
    bump(byProvider, e.provider);
    // An applied event with an error code (the original tool's provider_noop) changed nothing.
    const clean = e.outcome === 'applied' && e.error_code === null;
    if (clean) applied += 1;
    // A planned event (the original tool's, or a provider control) reclaimed nothing yet.
    if (clean) reclaimed += e.est_reclaimed_tokens;
    // Measured over the same compactions `applied` counts, so the two agree.
    if (clean && e.retention_total !== undefined) {
      const tally = (retentionBy[e.provider] ??= { measured_events: 0, checks: 0, retained: 0, lexical: 0 });
      for (const t of [retentionAll, tally]) {
        t.measured_events += 1;
        t.checks += e.retention_total;
        t.retained += e.retention_retained ?? 0;
        t.lexical += e.retention_lexical ?? 0;
      }
    }
    first = first === null ? e.ts : Math.min(first, e.ts);
    last = last === null ? e.ts : Math.max(last, e.ts);
  }
  return {
    since: options.since,
    total_events: events.length,
    skipped_lines: skipped,
    by_outcome: sorted(byOutcome),
    by_action: sorted(byAction),
    by_strategy: sorted(byStrategy),
    by_provider: sorted(byProvider),
    applied,
    est_reclaimed_tokens: reclaimed,
    first_ts: first,
    last_ts: last,
    retention: { all: retentionAll, by_provider: retentionBy },
    events: options.tail > 0 ? events.slice(-options.tail) : [],
  };
}
