import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { renderBenchReportHtml } from '../../../kernel/eval/report-html.js';
import { aggregateBench } from '../../../kernel/eval/bench-aggregate.js';
import { benchFailureRow } from '../../../kernel/eval/bench-rows.js';
import { ALL_BELOW_TRIGGER_MESSAGE, noSessionsMessage, type BenchWindow } from '../../../kernel/eval/bench-window.js';
import { contextSeriesFromSource, downsample } from '../../../kernel/eval/context-series.js';
import { STATE_CARD_MARKER } from '../../../sdk/state-card.js';
import { niceTicks, timeTicks, formatDuration } from '../../../kernel/eval/svg-kit.js';
import { sampleReportInput } from '../../fixtures/eval/sample-report.js';
import { buildSession, filler } from '../../fixtures/eval/session-builder.js';

const dir = mkdtempSync(join(tmpdir(), 'gob-report-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));
if (!CHROMIUM) console.log('HTML report browser test skipped: no /usr/bin/chromium (.ci/install-browser installs it)');

describe('bench HTML report', () => {
  const input = sampleReportInput();
  const html = renderBenchReportHtml(input);

  it('is one self-contained document: inline CSS and SVG, no script, no external reference', () => {
    expect(html.startsWith('<!doctype html>')).toBe(true);
    expect(html).toContain('<style>');
    expect(html).not.toMatch(/<script|<link|<img|<iframe|@import|url\(/i);
    expect(html).not.toMatch(/https?:\/\/|\bsrc=|\bhref=/i);
  });

  it('draws the three charts with axes, labels and legends, and a per-strategy table', () => {
    const svgs = html.match(/<svg viewBox="0 0 \d+ \d+" role="img"/g) ?? [];
    // scatter + box plot + six timelines
    expect(svgs).toHaveLength(8);
    expect(html).toContain('aria-label="reduction versus retention per strategy"');
    expect(html).toContain('aria-label="reduction quartiles per strategy"');
    expect((html.match(/aria-label="context over time"/g) ?? []).length).toBe(6);
    expect(html).toContain('context reduction (estimated tokens reclaimed)');
    expect(html).toContain('probes kept verbatim');
    expect(html).toContain('time since the session started');
    const legend = html.slice(html.indexOf('<div class="legend" role="list" aria-label="strategies">'));
    for (const a of input.aggregates) expect(legend.slice(0, legend.indexOf('</div>'))).toContain(`>${a.strategy}</span>`);
    expect(html).toContain('compaction (before → after)');
    // One compaction marker per compaction event.
    const compactions = input.timelines.reduce((n, t) => n + t.compactions.length, 0);
    expect((html.match(/<polygon points="[^"]+" fill="#D55E00"><title>/g) ?? []).length).toBe(compactions);
    const table = html.slice(html.indexOf('<table>'), html.indexOf('</table>'));
    expect((table.match(/<tr>/g) ?? []).length).toBe(1 + input.aggregates.length);
    // A code may break after an underscore in a narrow column, never from its count.
    expect(table.replaceAll('<wbr>', '')).toMatch(/below_trigger&nbsp;\d/);
    expect(html).toContain('.table-wrap { overflow-x: auto; }');
    expect(table.startsWith('<table>') && html.includes(`<div class="table-wrap">${table}`)).toBe(true);
  });

  it('uses a colour-blind-safe palette and escapes every id', () => {
    for (const c of ['#0072B2', '#E69F00', '#009E73']) expect(html).toContain(c);
    const hostile = renderBenchReportHtml({
      ...input,
      aggregates: [{ ...input.aggregates[0]!, strategy: '<script>x</script>' }],
      rows: input.rows.map((r) => ({ ...r, strategy: r.strategy === input.aggregates[0]!.strategy ? '<script>x</script>' : r.strategy })),
      timelines: [{ ...input.timelines[0]!, session: 'a"b<c>' }],
    });
    expect(hostile).not.toContain('<script>');
    expect(hostile).toContain('&lt;script&gt;x&lt;/script&gt;');
    expect(hostile).toContain('a&quot;b&lt;c&gt;');
  });

  it('gives each of the 13 built-in strategies its own legible colour, in the table swatches too', () => {
    const strategies = ['elide', 'compacted', 'structured', 'scored', 'dedupe', 'micro', 'middle', 'cache_aware', 'cliff', 'agentic', 'auto', 'sawtooth', 'cache_edits'];
    const template = input.rows.find((r) => r.status === 'plan')!;
    const rows = strategies.map((strategy) => ({ ...template, strategy }));
    const report = renderBenchReportHtml({ ...input, rows, aggregates: aggregateBench(rows), timelines: [] });
    const table = report.slice(report.indexOf('<table>'), report.indexOf('</table>'));
    const swatches = [...table.matchAll(/<span class="swatch" style="background:(#[0-9A-Fa-f]{6})"><\/span>([a-z_]+)</g)];
    expect(swatches.map((m) => m[2]).sort()).toEqual([...strategies].sort());
    const colours = swatches.map((m) => m[1]!);
    expect(new Set(colours).size).toBe(13);
    // Distinct to the eye, not just in hex: apart in CIELAB, and none fading into the white card.
    for (const [i, a] of colours.entries()) {
      expect(contrastOnWhite(a), a).toBeGreaterThanOrEqual(2);
      for (const b of colours.slice(i + 1)) expect(labDistance(a, b), `${a} ${b}`).toBeGreaterThanOrEqual(20);
    }
  });

  it("a state card's stamp (the day it was written) does not stretch a session's time axis; its tokens still count", () => {
    const session = buildSession({ goal: 'g', turns: [{ command: 'ls', output: filler(300) }, { command: 'ls', output: filler(300) }] });
    const last = session.source.toString('utf8').trimEnd().split('\n').at(-1)!;
    // A card appended half a year after the session's last turn, as apply does to an old session.
    const card = JSON.stringify({ type: 'user', timestamp: '2026-07-01T00:00:00.000Z', message: { role: 'user', content: `${STATE_CARD_MARKER}\ngoal: g` } });
    const source = Buffer.from(`${session.source.toString('utf8')}${card}\n`);
    const items = [...session.transcript.items, { line_index: session.transcript.items.length, kind: 'user', est_tokens: 25, label: 'user' } as (typeof session.transcript.items)[number]];
    const points = contextSeriesFromSource(source, items);
    const lastTurn = Date.parse(JSON.parse(last).timestamp);
    expect(Math.max(...points.map((p) => p.t))).toBe(lastTurn);
    expect(points.at(-1)!.context_tokens).toBe(items.reduce((n, i) => n + i.est_tokens, 0));
  });

  it('carries no transcript text: a session series is numbers only', () => {
    const session = buildSession({ goal: 'SECRET-GOAL-TEXT', turns: [{ say: 'SECRET-SAY', command: 'ls', output: 'SECRET-OUTPUT ' + filler(300) }, { command: 'ls', output: filler(300) }] });
    const points = contextSeriesFromSource(session.source, session.transcript.items);
    expect(points).toHaveLength(session.transcript.items.length);
    expect(points.at(-1)!.context_tokens).toBe(session.transcript.items.reduce((n, i) => n + i.est_tokens, 0));
    const report = renderBenchReportHtml({ ...input, timelines: [{ provider: 'claude_code', session: 's', points, compactions: [] }] });
    expect(report).not.toContain('SECRET');
  });

  it('says the events log could not be read instead of counting no compactions', () => {
    expect(html).toMatch(/\d+ gobstopper compaction/);
    const report = renderBenchReportHtml({ ...input, events_unreadable: '/d/events.jsonl: has mode 0644, readable by others' });
    expect(report).toContain('The events log could not be read (/d/events.jsonl: has mode 0644, readable by others), so no compaction is marked.');
    expect(report).not.toMatch(/\d+ gobstopper compaction/);
    expect(report).toContain('gobstopper compactions unknown');
  });

  it('counts what it says: the measured sessions the bench counted, rewrites are rendered rows, and failures are named', () => {
    const stat = (label: string) => html.match(new RegExp(`<b>(\\d+)</b><span>${label}</span>`))?.[1];
    expect(stat('sessions measured')).toBe(String(input.sessions_measured));
    expect(stat('sessions failed')).toBe(String(input.sessions - input.sessions_measured));
    expect(stat('rewrites rendered')).toBe(String(input.rows.filter((r) => r.execution_state === 'rendered').length));
    const failures = html.slice(html.indexOf('<h2>Sessions not measured</h2>'));
    expect(failures).toContain('<td>session-013</td><td>session_evaluation_failed</td><td class="reasons">session file is gone</td>');
  });

  it('names every strategy that ties for most often best, not the first of them alone', () => {
    const stat = (page: string) => page.match(/<div class="stat"><b>([^<]*)<\/b><span>(most often best[^<]*)<\/span><\/div>/)?.slice(1);
    const [a, b, c] = input.aggregates;
    const tied = renderBenchReportHtml({ ...input, aggregates: [{ ...a!, sessions_best: 1 }, { ...b!, sessions_best: 3 }, { ...c!, sessions_best: 3 }] });
    expect(stat(tied)).toEqual([`${b!.strategy}, ${c!.strategy}`, 'most often best, tied at 3 each']);
    const alone = renderBenchReportHtml({ ...input, aggregates: [{ ...a!, sessions_best: 1 }, { ...b!, sessions_best: 3 }, { ...c!, sessions_best: 2 }] });
    expect(stat(alone)).toEqual([b!.strategy, 'most often best']);
    const none = renderBenchReportHtml({ ...input, aggregates: [{ ...a!, sessions_best: 0 }] });
    expect(stat(none)).toEqual(['–', 'most often best']);
  });

  it('names each failed strategy row with its session, code and message, escaped, and lists at most 50 of them', () => {
    const base = input.rows.find((r) => r.strategy !== null && r.status === 'plan')!;
    const failedRow = (session: string, strategy: string, message: string) => ({ ...base, session, strategy, status: 'error' as const, execution_state: null, failure: 'strategy_evaluation_failed' as const, error: message, error_code: 'file_hash_mismatch', best: false });
    const rows = [...input.rows, failedRow('s-<1>', 'keep_last_jq', 'main.sh does not match the sha256 pinned in the manifest <changed> & "damaged"')];
    const report = renderBenchReportHtml({ ...input, rows, aggregates: aggregateBench(rows) });
    const section = report.slice(report.indexOf('<h2>Strategies that failed</h2>'));
    expect(report).toContain('<h2>Strategies that failed</h2>');
    expect(section).toContain('<td>s-&lt;1&gt;</td><td>keep_last_jq</td><td>file_hash_mismatch</td><td class="reasons">main.sh does not match the sha256 pinned in the manifest &lt;changed&gt; &amp; &quot;damaged&quot;</td>');
    expect(report).not.toContain('<changed>');

    const many = [...input.rows, ...Array.from({ length: 120 }, (_, i) => failedRow(`s-${i}`, 'keep_last_jq', 'broken'))];
    const big = renderBenchReportHtml({ ...input, rows: many, aggregates: aggregateBench(many) });
    const table = big.slice(big.indexOf('<h2>Strategies that failed</h2>'), big.indexOf('<h2>Sessions not measured</h2>'));
    expect((table.match(/<td>keep_last_jq<\/td>/g) ?? []).length).toBe(50);
    expect(table).toContain('Showing the first 50 of 120; the rows file (--output) has every one.');
    // Without failed strategies there is no such section.
    expect(html).not.toContain('Strategies that failed');
  });

  it('labels a strategy whose plans are all provider controls as such in the reduction chart, not "no plan"', () => {
    const base = input.rows.find((r) => r.strategy !== null && r.status === 'plan')!;
    const control = (session: string, status: 'plan' | 'no_plan') => ({ ...base, session, strategy: 'sawtooth', status, reason_code: status === 'plan' ? null : 'below_trigger', execution_state: status === 'plan' ? ('provider_only' as const) : ('not_run' as const), context_after: null, est_reclaimed: null, reduction_pct: null, score: null, recall: null, recall_available: false, best: false });
    const rows = [control('a', 'plan'), control('b', 'plan'), control('c', 'no_plan')];
    const idle = { ...control('d', 'no_plan'), strategy: 'dedupe' };
    const report = renderBenchReportHtml({ ...input, rows: [...rows, idle], aggregates: aggregateBench([...rows, idle]) });
    const chart = report.slice(report.indexOf('aria-label="reduction quartiles per strategy"'));
    const line = (strategy: string) => {
      const at = chart.indexOf(`>${strategy}</text>`);
      const next = chart.indexOf('<text class="label"', at);
      return chart.slice(at, next < 0 ? undefined : next);
    };
    expect(line('sawtooth')).toContain('>2/3 · –</text>');
    expect(line('sawtooth')).toContain('>provider control only</text>');
    expect(line('sawtooth')).not.toContain('no plan');
    expect(line('dedupe')).toContain('>no plan</text>');
    // The scatter's legend names only strategies it has marks for; the rest are named apart.
    const withPlans = [...input.rows, ...rows, idle];
    const mixed = renderBenchReportHtml({ ...input, rows: withPlans, aggregates: aggregateBench(withPlans) });
    const legend = mixed.slice(mixed.indexOf('<div class="legend" role="list" aria-label="strategies">'));
    const items = legend.slice(0, legend.indexOf('</div>'));
    expect(items).not.toContain('>sawtooth</span>');
    expect(items).toContain(`>${base.strategy}</span>`);
    expect(legend).toMatch(/<p class="note">Not on this chart \(no rendered rewrite with probes to keep\): [a-z_, ]*sawtooth/);
  });

  it('says how many timelines it left out', () => {
    expect(html).not.toContain('longest-running of');
    const few = renderBenchReportHtml({ ...input, max_timelines: 2 });
    expect((few.match(/aria-label="context over time"/g) ?? []).length).toBe(2);
    expect(few).toContain(`Showing the 2 longest-running of ${input.timelines.length} sessions.`);
  });

  it('draws a compaction applied long after the last record where the session ends, not months later', () => {
    const day = 86_400_000;
    const points = [0, 1, 2, 3].map((h) => ({ t: 1_700_000_000_000 + h * 3_600_000, context_tokens: 10_000 * (h + 1) }));
    const late = { t: points[3]!.t + 280 * day, context_tokens_before: 40_000, context_tokens_after: 12_000, strategy: 'elide' };
    const page = renderBenchReportHtml({ ...input, timelines: [{ provider: 'codex', session: 'old', points, compactions: [late] }] });
    const chart = page.slice(page.indexOf('aria-label="context over time"'));
    expect(chart).toContain('>3h<');
    expect(chart).not.toMatch(/>\d+d</);
  });

  it('marks a reported context apart from the estimate line, and does not join compactions counted on it', () => {
    const [tl] = input.timelines;
    const one = (timeline: typeof tl) => renderBenchReportHtml({ ...input, timelines: [timeline!] });
    const pathOf = (page: string) => page.match(/<path d="([^"]+)" fill="none" stroke="#0072B2"/)![1]!;
    const estimated = one({ ...tl!, token_basis: 'estimated', context_tokens: 1 });
    const reported = one({ ...tl!, token_basis: 'reported', context_tokens: 250_000 });
    expect(estimated).not.toContain('reported context now');
    expect(reported).toContain('<title>reported context now: 250k</title>');
    // The estimate line alone: one vertex per point; joined, each compaction adds two.
    const vertices = (d: string) => d.split(/[ML]/).filter(Boolean).length;
    expect(vertices(pathOf(reported))).toBe(tl!.points.length);
    expect(vertices(pathOf(estimated))).toBe(tl!.points.length + 2 * tl!.compactions.length);
    // Markers stay either way.
    for (const page of [estimated, reported]) expect((page.match(/fill="#D55E00"><title>/g) ?? []).length).toBe(tl!.compactions.length);
  });

  it('keeps the trigger label clear of the reported-context label when the two figures are close', () => {
    const [tl] = input.timelines;
    // A 12px label, about 7px a character: the box a reader sees, by its anchor.
    const boxes = (page: string) =>
      [...page.slice(page.indexOf('aria-label="context over time"')).matchAll(/<text class="tick" x="([\d.]+)" y="([\d.]+)" text-anchor="(start|end)">((?:trigger|reported)[^<]*)<\/text>/g)].map(
        ([, x, y, anchor, text]) => {
          const width = 7 * text!.length;
          const left = anchor === 'end' ? Number(x) - width : Number(x);
          return { text: text!, left, right: left + width, top: Number(y) - 12, bottom: Number(y) };
        },
      );
    for (const reported of [20_500, 21_600, 23_000, 90_000]) {
      const page = renderBenchReportHtml({ ...input, timelines: [{ ...tl!, trigger_tokens: 20_000, token_basis: 'reported', context_tokens: reported }] });
      const [a, b] = boxes(page);
      expect([a?.text, b?.text].sort(), String(reported)).toEqual([expect.stringMatching(/^reported /), 'trigger']);
      const overlap = a!.left < b!.right && b!.left < a!.right && a!.top < b!.bottom && b!.top < a!.bottom;
      expect(overlap, `${reported}: ${JSON.stringify([a, b])}`).toBe(false);
    }
  });

  it('says so when there is nothing to chart', () => {
    const empty = renderBenchReportHtml({ generated_at: 'now', sessions: 0, sessions_measured: 0, rows: [], aggregates: [], timelines: [] });
    expect(empty).toContain('no rendered plans to show');
    expect(empty).toContain('No context history was available');
  });

  it('with nothing measured, says why near the top, in the words the command prints', () => {
    const nothing = { generated_at: 'now', sessions: 0, sessions_measured: 0, rows: [], aggregates: [], timelines: [] };
    const why = (page: string) => page.match(/<p class="why" role="status">([^<]*)<\/p>/)?.[1];
    const since = Date.UTC(2026, 2, 8, 9, 30) / 1000;
    const windows: Array<[BenchWindow | undefined, string]> = [
      [{ kind: 'since', since, now: since + 60 }, 'No sessions updated since 2026-03-08 09:30 UTC.'],
      [{ kind: 'since', since, now: since - 60 }, 'No sessions updated since 2026-03-08 09:30 UTC, which is in the future (a date or time without an offset is UTC).'],
      [{ kind: 'recent', max_age_secs: 7 * 86400 }, 'No sessions found in the last 7 days (gobstopper bench --all measures older ones).'],
      [{ kind: 'all' }, 'No sessions found.'],
      [undefined, 'No sessions found.'],
    ];
    for (const [window, said] of windows) {
      expect(said).toBe(window ? noSessionsMessage(window) : 'No sessions found.');
      const page = renderBenchReportHtml({ ...nothing, window });
      expect(why(page)).toBe(said);
      // Above the stats and the first chart, not somewhere under them.
      expect(page.indexOf('class="why"')).toBeLessThan(page.indexOf('<div class="stats">'));
    }

    // Found but every one failed: the failures below say why; the top says to look there.
    const gone = [benchFailureRow('codex', 'a', '/home/dev/session.jsonl', 'session_evaluation_failed', 'session file is gone')];
    expect(why(renderBenchReportHtml({ ...nothing, sessions: 1, rows: gone, aggregates: aggregateBench(gone) }))).toBe('Not one of the 1 session(s) found could be measured: each failed, or every strategy failed on it (the failures are listed below).');

    // Measured, but no strategy fired: the trigger is why, as the command's note says.
    const base = input.rows.find((r) => r.strategy !== null && r.status === 'no_plan')!;
    const idle = ['elide', 'dedupe'].map((strategy) => ({ ...base, strategy, reason_code: 'below_trigger' }));
    const quiet = renderBenchReportHtml({ ...nothing, sessions: 1, sessions_measured: 1, rows: idle, aggregates: aggregateBench(idle) });
    expect(why(quiet)).toBe('Every session is under the trigger, so no strategy planned anything; --trigger and --floor measure them at a lower one.');
    expect(ALL_BELOW_TRIGGER_MESSAGE).toBe('every session is under the trigger, so no strategy planned anything; --trigger and --floor measure them at a lower one');

    // A report with something in it has no such line.
    expect(html).not.toContain('class="why"');
  });

  it.skipIf(!CHROMIUM)('opens in headless Chromium and renders a screenshot', () => {
    const page = join(dir, 'report.html');
    const png = join(dir, 'report.png');
    writeFileSync(page, html);
    execFileSync(
      CHROMIUM!,
      ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', `--user-data-dir=${mkdtempSync(join(dir, 'profile-'))}`, '--hide-scrollbars', '--window-size=1200,2900', `--screenshot=${png}`, `file://${page}`],
      { stdio: 'ignore', timeout: 60_000 },
    );
    const bytes = readFileSync(png);
    expect(bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))).toBe(true);
    expect(bytes.readUInt32BE(16)).toBe(1200);
    // A blank page compresses to a few kilobytes; charts and text do not.
    expect(statSync(png).size).toBeGreaterThan(50_000);
  }, 90_000);
});

describe('chart helpers', () => {
  it('picks round ticks', () => {
    expect(niceTicks(0, 100, 5)).toEqual([0, 20, 40, 60, 80, 100]);
    expect(niceTicks(40, 100, 5)).toEqual([40, 60, 80, 100]);
    expect(niceTicks(0, 7, 4)).toEqual([0, 2, 4, 6]);
    expect(timeTicks(3 * 3_600_000, 4)).toEqual([0, 3_600_000, 7_200_000, 10_800_000]);
    // A span of months keeps to about four labels, on multiples of 30 days.
    const day = 86_400_000;
    expect(timeTicks(290 * day, 4)).toEqual([0, 90 * day, 180 * day, 270 * day]);
    expect(formatDuration(5_400_000)).toBe('1h30');
    expect(formatDuration(0)).toBe('0');
  });

  it('downsamples long series to the first, last and an even spread', () => {
    const pts = Array.from({ length: 1000 }, (_, i) => ({ t: i, context_tokens: i }));
    const out = downsample(pts, 400);
    expect(out).toHaveLength(400);
    expect(out[0]).toEqual(pts[0]);
    expect(out.at(-1)).toEqual(pts.at(-1));
  });
});

const linear = (hex: string) => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16) / 255).map((c) => (c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4)) as [number, number, number];

/** WCAG contrast ratio against #FFFFFF. */
function contrastOnWhite(hex: string): number {
  const [r, g, b] = linear(hex);
  return 1.05 / (0.2126 * r + 0.7152 * g + 0.0722 * b + 0.05);
}

/** CIE76 ΔE: Euclidean distance in CIELAB (D65). */
function labDistance(a: string, b: string): number {
  const lab = (hex: string) => {
    const [r, g, bl] = linear(hex);
    const xyz = [(0.4124 * r + 0.3576 * g + 0.1805 * bl) / 0.95047, 0.2126 * r + 0.7152 * g + 0.0722 * bl, (0.0193 * r + 0.1192 * g + 0.9505 * bl) / 1.08883];
    const [fx, fy, fz] = xyz.map((t) => (t > 216 / 24389 ? Math.cbrt(t) : ((24389 / 27) * t + 16) / 116)) as [number, number, number];
    return [116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)];
  };
  const [p, q] = [lab(a), lab(b)];
  return Math.hypot(p[0]! - q[0]!, p[1]! - q[1]!, p[2]! - q[2]!);
}
