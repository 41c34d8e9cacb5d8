import { execFileSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readFileSync, renameSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { appendEvent, readEvents, rotatedLogPath, ROTATE_BYTES, type CompactionEvent } from '../../../kernel/publish/events.js';
import { summarizeEvents } from '../../../kernel/publish/events-summary.js';
import { dataDir, eventsLogPath } from '../../../kernel/paths.js';
import { makeTempHome, type TempHome } from '../../helpers/temp-home.js';

function event(overrides: Partial<CompactionEvent> = {}): CompactionEvent {
  return {
    schema: 'gobstopper/compaction-events-v1',
    ts: 1_700_000_000,
    provider: 'codex',
    session_id: 'sess-1',
    strategy: 'elide',
    action: 'transcript_compact',
    outcome: 'applied',
    trigger_tokens: 100_000,
    context_tokens_before: 120_000,
    context_tokens_after: 40_000,
    est_reclaimed_tokens: 80_000,
    items_covered: 12,
    duration_ms: 350,
    error_code: null,
    ...overrides,
  };
}

describe('events log', () => {
  let home: TempHome;
  let live: string;
  beforeEach(() => {
    home = makeTempHome('gob-events-');
    live = eventsLogPath(home.env);
  });
  afterEach(() => home.cleanup());

  it('appends valid events to a private file and reads them back', async () => {
    const full = event({
      snapshot_before_sha256: 'a'.repeat(64),
      snapshot_after_sha256: 'b'.repeat(64),
      source_identity_sha256: 'c'.repeat(64),
      retention_total: 10,
      retention_retained: 9,
      retention_lexical: 8,
      before_observation: { source_sha256: 'd'.repeat(64), source_identity_sha256: 'c'.repeat(64), context_state: 'reported', context_tokens: 120_000, estimated_context_tokens: 118_000, lifetime_scope: 'full', lifetime_input_tokens: 10, lifetime_cached_tokens: 5 },
    });
    expect(await appendEvent(event(), { env: home.env })).toEqual({ written: true });
    expect(await appendEvent(full, { env: home.env })).toEqual({ written: true });
    expect(statSync(live).mode & 0o777).toBe(0o600);
    expect(statSync(dataDir(home.env)).mode & 0o777).toBe(0o700);
    const read = await readEvents({ env: home.env });
    expect(read).toEqual({ events: [event(), full], skipped: 0, unreadable: [] });
  });

  it('a torn last line (a crash mid-write) costs only itself: the next event starts on its own line', async () => {
    await appendEvent(event({ session_id: 'first' }), { env: home.env });
    appendFileSync(live, '{"schema":"gobstopper/comp');
    await appendEvent(event({ session_id: 'after' }), { env: home.env });
    const read = await readEvents({ env: home.env });
    expect(read.events.map((e) => e.session_id)).toEqual(['first', 'after']);
    expect(read.skipped).toBe(1);
  });

  it('refuses invalid events with a warning and writes nothing', async () => {
    const bad: Array<[Partial<CompactionEvent> | Record<string, unknown>, string]> = [
      [{ est_reclaimed_tokens: 1 }, 'est_reclaimed_tokens'],
      [{ session_id: 'has space' }, 'session_id'],
      [{ strategy: '' }, 'strategy'],
      [{ outcome: 'great' as never }, 'outcome'],
      [{ error_code: 'boom' as never }, 'error_code'],
      [{ retention_total: 3 }, 'retention'],
      [{ retention_total: 3, retention_retained: 4, retention_lexical: 1 }, 'retention_retained'],
      [{ snapshot_before_sha256: 'ABC' }, 'snapshot_before_sha256'],
      [{ transcript_text: 'secret' } as Record<string, unknown>, 'additional'],
      [
        { before_observation: { source_sha256: 'd'.repeat(64), source_identity_sha256: 'c'.repeat(64), context_state: 'unknown', context_tokens: 5, estimated_context_tokens: 1, lifetime_scope: 'absent' } },
        'context_tokens',
      ],
      [
        { after_observation: { source_sha256: 'd'.repeat(64), source_identity_sha256: 'c'.repeat(64), context_state: 'absent', estimated_context_tokens: 1, lifetime_scope: 'full', lifetime_input_tokens: 1, lifetime_cached_tokens: 2 } },
        'lifetime_cached_tokens',
      ],
    ];
    for (const [overrides, mention] of bad) {
      const result = await appendEvent({ ...event(), ...overrides } as CompactionEvent, { env: home.env });
      expect(result.written).toBe(false);
      expect(result.warning).toMatch(/^event not recorded/);
      expect(result.warning).toContain(mention);
    }
    expect(existsSync(live)).toBe(false);
  });

  it('never throws when the log cannot be written, and never follows a symlink or blocks on a FIFO', async () => {
    mkdirSync(dataDir(home.env), { recursive: true, mode: 0o700 });
    const elsewhere = join(home.root, 'elsewhere.jsonl');
    symlinkSync(elsewhere, live);
    const linked = await appendEvent(event(), { env: home.env });
    expect(linked.written).toBe(false);
    expect(linked.warning).toContain('event not recorded');
    expect(existsSync(elsewhere)).toBe(false);

    renameSync(live, `${live}.old`);
    execFileSync('mkfifo', [live]);
    const fifo = await appendEvent(event(), { env: home.env });
    expect(fifo.written).toBe(false);
    const read = await readEvents({ env: home.env });
    expect(read.events).toEqual([]);
    expect(read.unreadable.map((u) => u.file)).toContain(live);
  });

  it('says in words why a log cannot be read, not in the errno text', async () => {
    // The data directory is a file: neither generation can be opened.
    mkdirSync(join(dataDir(home.env), '..'), { recursive: true });
    writeFileSync(dataDir(home.env), 'x');
    const read = await readEvents({ env: home.env });
    expect(read.unreadable).toEqual([
      { file: rotatedLogPath(live), reason: 'a file stands where a directory belongs' },
      { file: live, reason: 'a file stands where a directory belongs' },
    ]);
  });

  it('rotates past 8 MiB and reads the older generation first', async () => {
    await appendEvent(event({ ts: 1 }), { env: home.env });
    appendFileSync(live, Buffer.alloc(ROTATE_BYTES, 0x0a));
    await appendEvent(event({ ts: 2 }), { env: home.env });
    expect(existsSync(rotatedLogPath(live))).toBe(true);
    expect(statSync(live).size).toBeLessThan(1024);
    await appendEvent(event({ ts: 3 }), { env: home.env });
    const read = await readEvents({ env: home.env });
    expect(read.events.map((e) => e.ts)).toEqual([1, 2, 3]);
    // The filler is blank lines, which hold no event and are not counted as skipped.
    expect(read.skipped).toBe(0);
  });

  it('keeps the event when the log cannot be rotated, and says what is in the way', async () => {
    await appendEvent(event({ ts: 1 }), { env: home.env });
    appendFileSync(live, Buffer.alloc(ROTATE_BYTES, 0x0a));
    // A directory, not empty, where the older generation goes: the rename cannot replace it.
    mkdirSync(join(rotatedLogPath(live), 'in-the-way'), { recursive: true });
    const result = await appendEvent(event({ ts: 2 }), { env: home.env });
    expect(result).toEqual({
      written: true,
      warning: `the events log could not be rotated to ${rotatedLogPath(live)} (is a directory; move that aside), so it grows past 8 MiB`,
    });
    const lines = readFileSync(live, 'utf8').trimEnd().split('\n');
    expect(JSON.parse(lines.at(-1)!)).toMatchObject({ ts: 2 });
  });

  it('skips over-long, unparseable and invalid lines when reading', async () => {
    mkdirSync(dataDir(home.env), { recursive: true, mode: 0o700 });
    writeFileSync(
      live,
      [JSON.stringify(event({ ts: 5 })), '', '  ', 'garbage', JSON.stringify({ ...event(), est_reclaimed_tokens: 3 }), JSON.stringify({ ...event({ ts: 6 }), pad: 'x'.repeat(17_000) }), JSON.stringify(event({ ts: 7 }))].join('\n') + '\n',
      { mode: 0o600 },
    );
    const read = await readEvents({ env: home.env });
    expect(read.events.map((e) => e.ts)).toEqual([5, 7]);
    expect(read.skipped).toBe(3);
    expect(readFileSync(live, 'utf8')).toContain('garbage');
  });
});

describe('events summary', () => {
  it('counts by outcome, action, strategy and provider, and sums the tokens applied events reclaimed', () => {
    const events = [
      event({ ts: 10 }),
      event({ ts: 20, outcome: 'failed', error_code: 'apply_failed', context_tokens_after: 120_000, est_reclaimed_tokens: 0 }),
      event({ ts: 30, strategy: 'dedupe', outcome: 'planned', context_tokens_after: 100_000, est_reclaimed_tokens: 20_000 }),
      event({ ts: 40, provider: 'claude_code', session_id: 'other' }),
    ];
    const summary = summarizeEvents(events, 2, { since: 15, tail: 2 });
    expect(summary).toEqual({
      since: 15,
      total_events: 3,
      skipped_lines: 2,
      by_outcome: { applied: 1, failed: 1, planned: 1 },
      by_action: { transcript_compact: 3 },
      by_strategy: { elide: 2, dedupe: 1 },
      by_provider: { codex: 2, claude_code: 1 },
      applied: 1,
      // The applied event's 80,000 only: a planned event reclaimed nothing yet.
      est_reclaimed_tokens: 80_000,
      first_ts: 20,
      last_ts: 40,
      retention: { all: { measured_events: 0, checks: 0, retained: 0, lexical: 0 }, by_provider: {} },
      events: [events[2], events[3]],
    });
    expect(summarizeEvents(events, 0, { since: null, tail: 0, session: 'other' })).toMatchObject({ total_events: 1, events: [] });
    // A prefix typed in capitals selects the same sessions, as recall, vault and history take it.
    expect(summarizeEvents(events, 0, { since: null, tail: 0, session: 'OTH' })).toMatchObject({ total_events: 1 });
  });

  it('sums measured retention over applied events only, in all and per provider', () => {
    const measured = (over: Parameters<typeof event>[0]) => event({ retention_total: 10, retention_retained: 7, retention_lexical: 8, ...over });
    const events = [
      measured({ ts: 1 }),
      measured({ ts: 2, provider: 'claude_code', session_id: 'c' }),
      measured({ ts: 3, outcome: 'failed', error_code: 'apply_failed', context_tokens_after: 120_000, est_reclaimed_tokens: 0 }),
      event({ ts: 4 }),
      // Not counted as applied, so not as a measured compaction either.
      measured({ ts: 5, error_code: 'provider_noop' }),
    ];
    const { retention, applied } = summarizeEvents(events, 0, { since: null, tail: 0 });
    expect(applied).toBe(3);
    expect(retention).toEqual({
      all: { measured_events: 2, checks: 20, retained: 14, lexical: 16 },
      by_provider: { codex: { measured_events: 1, checks: 10, retained: 7, lexical: 8 }, claude_code: { measured_events: 1, checks: 10, retained: 7, lexical: 8 } },
    });
  });
});
