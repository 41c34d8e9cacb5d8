import { existsSync } from 'node:fs';
import { Flags } from '@oclif/core';
import type { EventsCommandOutput } from '../../../schemas/generated/types.js';
import { GobstopperError } from '../../errors.js';
import { readEvents, rotatedLogPath } from '../../publish/events.js';
import { summarizeEvents } from '../../publish/events-summary.js';
import { futureSinceNote, parseSince, SINCE_HELP } from '../../text/since.js';
import { eventsLogPath } from '../../paths.js';
import { checkSessionSelector } from '../../vault/selectors.js';
import { formatCount, formatTs } from '../../text/human.js';
import { wrapText } from '../../text/wrap.js';
import { BaseCommand } from '../base-command.js';

export type EventsResult = EventsCommandOutput;

const MAX_EVENTS_LISTED = 100_000;

function counts(record: Record<string, number>): string {
  const parts = Object.entries(record).map(([k, v]) => `${k} ${formatCount(v)}`);
  return parts.length > 0 ? parts.join(', ') : '-';
}

export default class Events extends BaseCommand<EventsResult> {
  static override summary = 'Summarise the compaction-events log.';
  static override description =
    'Reads <data>/events.jsonl (and the rotated events.1.jsonl first): counts by outcome, action, strategy and provider, the estimated tokens reclaimed ' +
    '(an estimate from context sizes, not billing), and the newest events. The log holds numbers, codes and digests only. ' +
    'Like the vault\'s files it must be yours and private (mode 0600); one that others can read is refused with the chmod that fixes it.';
  static override examples = ['<%= config.bin %> events', '<%= config.bin %> events --since 24h', '<%= config.bin %> events --since 2026-01-31T00:00:00Z --json'];
  static override flags = {
    since: Flags.string({ description: `Window start: ${SINCE_HELP}.` }),
    // --tail was its first name; --limit is what the other listing commands call it.
    limit: Flags.integer({ description: `Newest events to list (0-${MAX_EVENTS_LISTED}; 0 lists none, only the counts).`, aliases: ['tail'], default: 20, min: 0, max: MAX_EVENTS_LISTED }),
    session: Flags.string({ description: 'Only sessions whose id starts with this.' }),
  };

  async run(): Promise<EventsResult> {
    const { flags } = await this.parse(Events);
    const now = Math.floor(Date.now() / 1000);
    const since = flags.since === undefined ? null : parseSince(flags.since, now);
    if (flags.session !== undefined) checkSessionSelector(flags.session);
    const log = await readEvents({ env: process.env });
    // Planning goes on past a broken log (it only tunes the trigger); a readout of it cannot.
    const bad = log.unreadable[0];
    if (bad) throw new GobstopperError('events_log_unreadable', `cannot read the events log ${bad.file}: ${bad.reason}`, { details: { file: bad.file } });
    const s = summarizeEvents(log.events, log.skipped, { since, tail: flags.limit, session: flags.session });
    // An unreadable line has no time or session: it is counted over the whole log, and said so.
    const narrowed = since !== null || flags.session !== undefined;
    const skipped = s.skipped_lines > 0 ? `${formatCount(s.skipped_lines)} unreadable line(s) skipped${narrowed ? ' in the whole log' : ''}` : null;
    if (s.total_events === 0) {
      const of = flags.session === undefined ? '' : ` of sessions matching '${flags.session}'`;
      const live = eventsLogPath(process.env);
      const rotated = rotatedLogPath(live);
      const where = existsSync(rotated) ? `${live} or ${rotated}` : live;
      this.say(`no events${of}${since === null ? '' : ` since ${formatTs(since)} UTC${futureSinceNote(since, now)}`} in ${where}`);
      if (skipped !== null) this.say(`  ${skipped}`);
      return s;
    }
    this.say(`${formatCount(s.total_events)} event(s)${since === null ? '' : ` since ${formatTs(since)} UTC`}, ${formatTs(s.first_ts!)} to ${formatTs(s.last_ts!)} UTC`);
    this.say(`  outcomes:   ${counts(s.by_outcome)}`);
    this.say(`  actions:    ${counts(s.by_action)}`);
    this.say(`  strategies: ${counts(s.by_strategy)}`);
    this.say(`  providers:  ${counts(s.by_provider)}`);
    // The outcomes line counts every event labelled applied; one with an error code changed nothing, and
    // without a word the two "applied" counts would read as a contradiction.
    const noop = (s.by_outcome.applied ?? 0) - s.applied;
    const unchanged = noop > 0 ? ` (${formatCount(noop)} more labelled applied ${noop === 1 ? 'carries' : 'carry'} an error code and changed nothing)` : '';
    const appliedLine = `  applied: ${formatCount(s.applied)}${unchanged}; ~${formatCount(s.est_reclaimed_tokens)} tokens reclaimed (estimated context, not billing)`;
    for (const line of wrapText(appliedLine, this.tableWidth(), '           ')) this.say(line);
    const r = s.retention?.all;
    if (r && r.measured_events > 0) {
      const pct = (n: number) => (r.checks > 0 ? `${Math.round((100 * n) / r.checks)}%` : 'n/a');
      const text = `  retention: ${formatCount(r.retained)} of ${formatCount(r.checks)} checks kept at their source (${pct(r.retained)}), ${formatCount(r.lexical)} lexically (${pct(r.lexical)}), over ${formatCount(r.measured_events)} measured compaction(s)`;
      for (const line of wrapText(text, this.tableWidth(), '             ')) this.say(line);
    }
    if (skipped !== null) this.say(`  ${skipped}`);
    if (s.events.length > 0) {
      this.say('');
      const rows = s.events.map((e) => [formatTs(e.ts), e.provider, e.strategy, e.action, e.outcome + (e.error_code ? ` (${e.error_code})` : ''), `${formatCount(e.context_tokens_before)} → ${formatCount(e.context_tokens_after)}`, e.session_id]);
      this.sayTable([{ header: 'TIME (UTC)' }, { header: 'PROVIDER', optional: true }, { header: 'STRATEGY' }, { header: 'ACTION', optional: true }, { header: 'OUTCOME' }, { header: 'CONTEXT', align: 'right' }, { header: 'SESSION', fit: 'end', minWidth: 13 }], rows);
    }
    return s;
  }
}
