/**
 * The bench report: one self-contained HTML file (inline CSS and SVG, no script, no external asset)
 * that shows what each strategy reclaims against what it keeps, and how sessions' context grew and
 * fell at their compactions. Only ids, counts and ratios appear; never transcript text.
 */
import type { BenchAggregate, BenchRow } from '../../schemas/generated/types.js';
import { nothingMeasuredReason, type BenchWindow } from './bench-window.js';
import { esc, formatDuration, formatTokens, linearScale, marker, niceMax, niceTicks, px, seriesStyle, timeTicks } from './svg-kit.js';

export interface ContextPoint {
  /** Milliseconds since the epoch. */
  t: number;
  context_tokens: number;
}

export interface CompactionPoint {
  t: number;
  context_tokens_before: number;
  context_tokens_after: number;
  strategy?: string | null;
}

export interface SessionTimeline {
  provider: string;
  session: string;
  points: ContextPoint[];
  compactions: CompactionPoint[];
  trigger_tokens?: number | null;
  /**
   * The context the trigger is compared with now, and where it comes from. When the client
   * reported it, it can be far from the items' estimate the line is drawn from (a system prompt,
   * tools, a provider's own history); the chart then marks it apart instead of mixing the two.
   */
  context_tokens?: number | null;
  token_basis?: 'reported' | 'estimated' | 'projected' | null;
}

export interface BenchReportInput {
  generated_at: string;
  sessions: number;
  /** Sessions at least one strategy measured (the bench counts them as it collects). */
  sessions_measured: number;
  rows: readonly BenchRow[];
  aggregates: readonly BenchAggregate[];
  timelines: readonly SessionTimeline[];
  title?: string;
  /** Timelines drawn at most (the longest-running first); default 12. */
  max_timelines?: number;
  /** Why the events log could not be read, when it could not: no compaction is marked then. */
  events_unreadable?: string | null;
  /** Where the bench looked for sessions, named when it found none (without it: every age). */
  window?: BenchWindow;
}

const CSS = `
:root { color-scheme: light; --ink: #1d2433; --muted: #5b6475; --grid: #e3e6ec; --card: #ffffff; --bg: #f5f6f8; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--ink); font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 1120px; margin: 0 auto; padding: 32px 24px 48px; }
h1 { font-size: 26px; margin: 0 0 4px; letter-spacing: -0.01em; }
h2 { font-size: 19px; margin: 0 0 4px; }
p.lede, p.note { color: var(--muted); margin: 0 0 16px; }
section { background: var(--card); border-radius: 10px; padding: 20px 22px; margin: 20px 0; box-shadow: 0 1px 2px rgba(16,24,40,.06), 0 1px 3px rgba(16,24,40,.08); }
.stats { display: flex; flex-wrap: wrap; gap: 12px; margin: 18px 0 0; }
.stat { background: var(--card); border-radius: 10px; padding: 12px 16px; min-width: 150px; box-shadow: 0 1px 2px rgba(16,24,40,.06); }
.stat b { display: block; font-size: 22px; }
.stat span { color: var(--muted); font-size: 13px; }
svg { display: block; width: 100%; height: auto; }
svg text { font-family: inherit; fill: var(--ink); }
svg .axis text, svg .tick { font-size: 12px; fill: var(--muted); }
svg .label { font-size: 13px; fill: var(--ink); }
svg .grid line { stroke: var(--grid); }
.legend { display: flex; flex-wrap: wrap; gap: 6px 18px; margin: 10px 0 0; font-size: 13px; }
.legend span { display: inline-flex; align-items: center; gap: 6px; }
.legend svg { width: 14px; height: 14px; display: inline-block; }
.multiples { display: grid; grid-template-columns: repeat(auto-fill, minmax(330px, 1fr)); gap: 14px; }
.multiples figure { margin: 0; border: 1px solid var(--grid); border-radius: 8px; padding: 8px 10px 4px; }
figcaption { font-size: 13px; color: var(--muted); overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
table { width: 100%; border-collapse: collapse; font-size: 14px; font-variant-numeric: tabular-nums; }
th, td { text-align: right; padding: 7px 10px; border-bottom: 1px solid var(--grid); white-space: nowrap; }
th, td.reasons, td.wrap { white-space: normal; }
td.reasons { min-width: 14em; }
.table-wrap { overflow-x: auto; }
th:first-child, td:first-child, td.reasons, th.reasons { text-align: left; }
th { color: var(--muted); font-weight: 600; font-size: 13px; }
td .swatch { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 8px; vertical-align: middle; }
.empty { color: var(--muted); font-style: italic; }
p.why { background: #fff4e5; border-left: 4px solid #D55E00; border-radius: 6px; padding: 10px 14px; margin: 18px 0 0; }
`;

interface StrategyStyle {
  color: string;
  shape: ReturnType<typeof seriesStyle>['shape'];
}

function strategyStyles(aggregates: readonly BenchAggregate[]): Map<string, StrategyStyle> {
  const styles = new Map<string, StrategyStyle>();
  aggregates.forEach((a, i) => styles.set(a.strategy, seriesStyle(i)));
  return styles;
}

function legendSwatch(style: StrategyStyle): string {
  return `<svg viewBox="0 0 14 14" aria-hidden="true">${marker(style.shape, 7, 7, 5, `fill="${style.color}"`)}</svg>`;
}

/** Whether a bench row is a mark on the reduction-against-retention chart. */
const plotted = (row: BenchRow): boolean => row.status === 'plan' && row.recall !== null && row.recall_available && row.reduction_pct !== null && row.strategy !== null;

/**
 * The scatter's legend: only the strategies it has marks for, since a swatch with nothing behind
 * it sends the eye to look for a colour that is not there (or to a near one that is); the others
 * are named in a line of their own.
 */
function scatterLegend(rows: readonly BenchRow[], aggregates: readonly BenchAggregate[], styles: Map<string, StrategyStyle>): string {
  const shown = new Set(rows.filter(plotted).map((r) => r.strategy!));
  const items = aggregates.filter((a) => shown.has(a.strategy)).map((a) => `<span>${legendSwatch(styles.get(a.strategy)!)}${esc(a.strategy)}</span>`);
  const absent = aggregates.filter((a) => !shown.has(a.strategy)).map((a) => esc(a.strategy));
  const note = absent.length > 0 ? `<p class="note">Not on this chart (no rendered rewrite with probes to keep): ${absent.join(', ')}.</p>` : '';
  return `<div class="legend" role="list" aria-label="strategies">${items.join('')}</div>${note}`;
}

/** Reduction (x) against probe recall (y): one faint mark per session, a bold mark per strategy median with its IQR. */
function scatterChart(rows: readonly BenchRow[], aggregates: readonly BenchAggregate[], styles: Map<string, StrategyStyle>): string {
  const W = 760;
  const H = 440;
  const m = { top: 20, right: 24, bottom: 56, left: 64 };
  // The recall axis starts at a round value under the lowest recall, so the spread is readable.
  const recalls = rows.filter((r) => r.status === 'plan' && r.recall !== null && r.recall_available).map((r) => r.recall! * 100);
  const yMin = recalls.length ? Math.max(0, Math.min(80, Math.floor((Math.min(...recalls) - 5) / 10) * 10)) : 0;
  const x = linearScale([0, 100], [m.left, W - m.right]);
  const y = linearScale([yMin, 100], [H - m.bottom, m.top]);
  const xTicks = niceTicks(0, 100, 5);
  const yTicks = niceTicks(yMin, 100, 5);
  const parts: string[] = [];
  parts.push('<g class="grid">');
  for (const t of xTicks) parts.push(`<line x1="${px(x(t))}" x2="${px(x(t))}" y1="${m.top}" y2="${H - m.bottom}"/>`);
  for (const t of yTicks) parts.push(`<line x1="${m.left}" x2="${W - m.right}" y1="${px(y(t))}" y2="${px(y(t))}"/>`);
  parts.push('</g><g class="axis">');
  for (const t of xTicks) parts.push(`<text class="tick" x="${px(x(t))}" y="${H - m.bottom + 18}" text-anchor="middle">${t}%</text>`);
  for (const t of yTicks) parts.push(`<text class="tick" x="${m.left - 8}" y="${px(y(t) + 4)}" text-anchor="end">${t}%</text>`);
  parts.push(`<line x1="${m.left}" x2="${W - m.right}" y1="${H - m.bottom}" y2="${H - m.bottom}" stroke="#9aa3b2"/>`);
  parts.push(`<line x1="${m.left}" x2="${m.left}" y1="${m.top}" y2="${H - m.bottom}" stroke="#9aa3b2"/>`);
  parts.push('</g>');
  parts.push(`<text class="label" x="${px((m.left + W - m.right) / 2)}" y="${H - 12}" text-anchor="middle">context reduction (estimated tokens reclaimed)</text>`);
  parts.push(`<text class="label" transform="translate(18 ${px((m.top + H - m.bottom) / 2)}) rotate(-90)" text-anchor="middle">probes kept verbatim</text>`);
  parts.push(`<text class="tick" x="${W - m.right - 4}" y="${m.top + 14}" text-anchor="end">better ↗</text>`);
  let points = 0;
  parts.push('<g class="sessions">');
  for (const row of rows) {
    // A session without probes has no recall to plot (its 100% is a definition, not a measure).
    if (!plotted(row)) continue;
    const style = styles.get(row.strategy!);
    if (!style) continue;
    points += 1;
    // The outline keeps the hue a faint fill washes out (a wine red read as pink beside a pink).
    parts.push(marker(style.shape, x(row.reduction_pct!), y(row.recall! * 100), 3.5, `fill="${style.color}" fill-opacity="0.28" stroke="${style.color}" stroke-opacity="0.7" stroke-width="0.8"`));
  }
  parts.push('</g><g class="medians">');
  for (const a of aggregates) {
    if (!a.reduction_pct || a.median_recall === null) continue;
    const style = styles.get(a.strategy)!;
    const cy = y(a.median_recall * 100);
    const label = `${a.strategy}: median reduction ${a.reduction_pct.median.toFixed(1)}%, median kept ${Math.round(a.median_recall * 100)}%`;
    parts.push(`<g><title>${esc(label)}</title>`);
    parts.push(`<line x1="${px(x(a.reduction_pct.q1))}" x2="${px(x(a.reduction_pct.q3))}" y1="${px(cy)}" y2="${px(cy)}" stroke="${style.color}" stroke-width="2.5" stroke-linecap="round"/>`);
    parts.push(marker(style.shape, x(a.reduction_pct.median), cy, 7, `fill="${style.color}" stroke="#fff" stroke-width="1.5"`));
    parts.push('</g>');
  }
  parts.push('</g>');
  const body = points === 0 ? `<text class="label" x="${W / 2}" y="${H / 2}" text-anchor="middle">no rendered plans to show</text>` : '';
  return `<svg viewBox="0 0 ${W} ${H}" role="img" aria-label="reduction versus retention per strategy">${parts.join('')}${body}</svg>`;
}

/** One horizontal box per strategy: reduction quartiles over the sessions where it planned. */
function boxChart(aggregates: readonly BenchAggregate[], styles: Map<string, StrategyStyle>): string {
  const rowH = 30;
  const m = { top: 14, right: 150, bottom: 48, left: 130 };
  const W = 760;
  const H = m.top + m.bottom + rowH * Math.max(1, aggregates.length);
  const x = linearScale([0, 100], [m.left, W - m.right]);
  const parts: string[] = ['<g class="grid">'];
  for (const t of niceTicks(0, 100, 5)) parts.push(`<line x1="${px(x(t))}" x2="${px(x(t))}" y1="${m.top}" y2="${H - m.bottom}"/>`);
  parts.push('</g><g class="axis">');
  for (const t of niceTicks(0, 100, 5)) parts.push(`<text class="tick" x="${px(x(t))}" y="${H - m.bottom + 18}" text-anchor="middle">${t}%</text>`);
  parts.push(`<text class="tick" x="${W - m.right + 12}" y="${m.top - 2}" text-anchor="start">planned · kept</text>`);
  parts.push('</g>');
  parts.push(`<text class="label" x="${px((m.left + W - m.right) / 2)}" y="${H - 10}" text-anchor="middle">context reduction per session (min, quartiles, max)</text>`);
  aggregates.forEach((a, i) => {
    const style = styles.get(a.strategy)!;
    const cy = m.top + rowH * i + rowH / 2;
    parts.push(`<text class="label" x="${m.left - 10}" y="${px(cy + 4)}" text-anchor="end">${esc(a.strategy)}</text>`);
    const kept = a.median_recall === null ? '–' : `${Math.round(a.median_recall * 100)}%`;
    parts.push(`<text class="tick" x="${W - m.right + 12}" y="${px(cy + 4)}">${a.sessions_with_plan}/${a.sessions} · ${kept}</text>`);
    const q = a.reduction_pct;
    if (!q) {
      // Plans without a reduction are provider controls: the provider decides what they reclaim.
      const why = a.sessions_with_plan === 0 ? 'no plan' : 'provider control only';
      parts.push(`<text class="tick" x="${m.left + 6}" y="${px(cy + 4)}">${why}</text>`);
      return;
    }
    parts.push(`<line x1="${px(x(q.min))}" x2="${px(x(q.max))}" y1="${px(cy)}" y2="${px(cy)}" stroke="${style.color}" stroke-width="1.5"/>`);
    parts.push(`<rect x="${px(x(q.q1))}" y="${px(cy - 9)}" width="${px(Math.max(1.5, x(q.q3) - x(q.q1)))}" height="18" rx="3" fill="${style.color}" fill-opacity="0.35" stroke="${style.color}"/>`);
    parts.push(`<line x1="${px(x(q.median))}" x2="${px(x(q.median))}" y1="${px(cy - 11)}" y2="${px(cy + 11)}" stroke="#1d2433" stroke-width="2.5"/>`);
  });
  return `<svg viewBox="0 0 ${W} ${H}" role="img" aria-label="reduction quartiles per strategy">${parts.join('')}</svg>`;
}

/** Height of a 12px tick label, baseline to cap, with a pixel to spare. */
const LABEL_HEIGHT = 13;

/** One session: estimated context over elapsed time, compactions as drops with a marker. */
function timelineChart(timeline: SessionTimeline): string {
  const W = 360;
  const H = 190;
  const m = { top: 12, right: 12, bottom: 36, left: 50 };
  const points = [...timeline.points].sort((a, b) => a.t - b.t);
  // An idle session is compacted after its last record, often long after (an old session applied
  // today): at the event's own time the drop would squeeze the whole session into the first pixel.
  // Such a compaction is drawn where the session's record ends.
  const last = points.at(-1)?.t;
  const compactions = timeline.compactions.map((c) => (last !== undefined && c.t > last ? { ...c, t: last } : c));
  timeline = { ...timeline, compactions };
  const t0 = points[0]?.t ?? timeline.compactions[0]?.t ?? 0;
  const tEnd = Math.max(t0 + 1, ...points.map((p) => p.t), ...timeline.compactions.map((c) => c.t));
  const reported = timeline.token_basis === 'reported' && timeline.context_tokens != null ? timeline.context_tokens : null;
  const peak = Math.max(1, ...points.map((p) => p.context_tokens), ...timeline.compactions.map((c) => c.context_tokens_before), timeline.trigger_tokens ?? 0, reported ?? 0);
  const x = linearScale([0, tEnd - t0], [m.left, W - m.right]);
  const y = linearScale([0, niceMax(peak)], [H - m.bottom, m.top]);
  const parts: string[] = ['<g class="grid">'];
  for (const t of niceTicks(0, niceMax(peak), 4)) parts.push(`<line x1="${m.left}" x2="${W - m.right}" y1="${px(y(t))}" y2="${px(y(t))}"/>`);
  parts.push('</g><g class="axis">');
  for (const t of niceTicks(0, niceMax(peak), 4)) parts.push(`<text class="tick" x="${m.left - 6}" y="${px(y(t) + 4)}" text-anchor="end">${formatTokens(t)}</text>`);
  for (const t of timeTicks(tEnd - t0, 4)) parts.push(`<text class="tick" x="${px(x(t))}" y="${H - m.bottom + 16}" text-anchor="middle">${formatDuration(t)}</text>`);
  parts.push(`<line x1="${m.left}" x2="${W - m.right}" y1="${H - m.bottom}" y2="${H - m.bottom}" stroke="#9aa3b2"/>`);
  parts.push('</g>');
  parts.push(`<text class="tick" x="${px((m.left + W - m.right) / 2)}" y="${H - 4}" text-anchor="middle">time since the session started</text>`);
  if (timeline.trigger_tokens) {
    const ty = y(timeline.trigger_tokens);
    parts.push(`<line x1="${m.left}" x2="${W - m.right}" y1="${px(ty)}" y2="${px(ty)}" stroke="#D55E00" stroke-dasharray="5 4" stroke-width="1.2"/>`);
    // The reported label sits at the right end too; a context near the trigger would print one
    // label over the other, so the trigger's moves to the left end then.
    const crowded = reported !== null && Math.abs(y(reported) + 4 - (ty - 4)) < LABEL_HEIGHT;
    const at = crowded ? `x="${m.left + 4}" y="${px(ty - 4)}" text-anchor="start"` : `x="${W - m.right - 2}" y="${px(ty - 4)}" text-anchor="end"`;
    parts.push(`<text class="tick" ${at}>trigger</text>`);
  }
  // On the estimate's basis the line drops at each compaction: before, then after at the same
  // instant. A compaction counted on reported context is only marked: joined, the line would jump
  // between two measures.
  const path: Array<[number, number]> = [];
  const events = [...timeline.compactions].sort((a, b) => a.t - b.t);
  const joined = reported === null ? events : [];
  let e = 0;
  for (const p of points) {
    while (e < joined.length && joined[e]!.t <= p.t) {
      path.push([joined[e]!.t, joined[e]!.context_tokens_before], [joined[e]!.t, joined[e]!.context_tokens_after]);
      e++;
    }
    path.push([p.t, p.context_tokens]);
  }
  for (; e < joined.length; e++) path.push([joined[e]!.t, joined[e]!.context_tokens_before], [joined[e]!.t, joined[e]!.context_tokens_after]);
  if (path.length > 0) {
    const d = path.map(([t, v], i) => `${i === 0 ? 'M' : 'L'}${px(x(t - t0))} ${px(y(v))}`).join(' ');
    parts.push(`<path d="${d}" fill="none" stroke="#0072B2" stroke-width="2" stroke-linejoin="round"/>`);
  }
  for (const c of events) {
    const cx = x(c.t - t0);
    parts.push(`<line x1="${px(cx)}" x2="${px(cx)}" y1="${px(y(c.context_tokens_before))}" y2="${px(y(c.context_tokens_after))}" stroke="#D55E00" stroke-width="1.5" stroke-dasharray="2 2"/>`);
    parts.push(`<polygon points="${px(cx - 5)},${px(y(c.context_tokens_after) - 9)} ${px(cx + 5)},${px(y(c.context_tokens_after) - 9)} ${px(cx)},${px(y(c.context_tokens_after) - 1)}" fill="#D55E00"><title>${esc(c.strategy ?? 'compaction')}: ${formatTokens(c.context_tokens_before)} → ${formatTokens(c.context_tokens_after)}</title></polygon>`);
  }
  if (reported !== null) {
    const rx = x(tEnd - t0);
    const ry = y(reported);
    parts.push(`<polygon points="${px(rx)},${px(ry - 5)} ${px(rx + 5)},${px(ry)} ${px(rx)},${px(ry + 5)} ${px(rx - 5)},${px(ry)}" fill="#009E73"><title>reported context now: ${formatTokens(reported)}</title></polygon>`);
    parts.push(`<text class="tick" x="${px(rx - 8)}" y="${px(ry + 4)}" text-anchor="end">reported ${formatTokens(reported)}</text>`);
  }
  return `<svg viewBox="0 0 ${W} ${H}" role="img" aria-label="context over time">${parts.join('')}</svg>`;
}

function summaryTable(aggregates: readonly BenchAggregate[], styles: Map<string, StrategyStyle>): string {
  const pct = (v: number) => `${v.toFixed(1)}%`;
  const rows = aggregates.map((a) => {
    const q = a.reduction_pct;
    const reasons = Object.entries(a.no_plan_by_reason)
      .sort((p, q2) => q2[1] - p[1])
      // A code may break after its underscores, never between it and its count.
      .map(([reason, n]) => `${esc(reason).replace(/_/g, '_<wbr>')}&nbsp;${n}`)
      .join(', ');
    return `<tr><td><span class="swatch" style="background:${styles.get(a.strategy)!.color}"></span>${esc(a.strategy)}</td><td class="wrap">${a.sessions_with_plan}/${a.sessions}${a.sessions_with_control > 0 ? ` (${a.sessions_with_control}&nbsp;provider control${a.sessions_with_control === 1 ? '' : 's'})` : ''}</td><td>${q ? pct(q.median) : '–'}</td><td>${q ? `${pct(q.q1)} – ${pct(q.q3)}` : '–'}</td><td>${a.median_recall === null ? '–' : pct(a.median_recall * 100)}</td><td>${a.tail_intact_sessions}</td><td>${a.sessions_best}</td><td>${a.sessions_failed}</td><td class="reasons">${reasons || '–'}</td></tr>`;
  });
  return `<div class="table-wrap"><table><thead><tr><th>strategy</th><th>planned</th><th>median reduction</th><th>IQR</th><th>median kept</th><th>tail intact</th><th>best</th><th>failed</th><th class="reasons">no plan, by reason</th></tr></thead><tbody>${rows.join('')}</tbody></table></div>`;
}

/**
 * Failure rows listed in a report, at most: a broken bundle fails its row in every session, and a
 * bench of thousands would bury the charts. The rows file (--output) keeps every one.
 */
const MAX_FAILURE_ROWS = 50;

/** A table of failure rows, cut at MAX_FAILURE_ROWS with a note saying how many are not shown. */
function failureTable(headers: readonly string[], rows: readonly BenchRow[], cells: (r: BenchRow) => string[]): string {
  const shown = rows.slice(0, MAX_FAILURE_ROWS);
  const head = headers.map((h, i) => (i === headers.length - 1 ? `<th class="reasons">${h}</th>` : `<th>${h}</th>`)).join('');
  const body = shown.map((r) => `<tr>${cells(r).map((c, i, all) => (i === all.length - 1 ? `<td class="reasons">${esc(c)}</td>` : `<td>${esc(c)}</td>`)).join('')}</tr>`);
  const cut = rows.length > shown.length ? `<p class="note">Showing the first ${shown.length} of ${rows.length}; the rows file (--output) has every one.</p>` : '';
  return `<div class="table-wrap"><table><thead><tr>${head}</tr></thead><tbody>${body.join('')}</tbody></table></div>${cut}`;
}

/** Sessions the bench could not measure, with why (messages name files and codes, never content). */
function failedSessions(rows: readonly BenchRow[]): string {
  const failed = rows.filter((r) => r.failure != null && r.strategy === null);
  if (failed.length === 0) return '';
  return `<section>
<h2>Sessions not measured</h2>
${failureTable(['provider', 'session', 'failure', 'why'], failed, (r) => [r.provider, r.session, r.failure ?? '', r.error ?? ''])}
</section>`;
}

/** Strategies that failed on a session the others measured: the "failed" counts above, with why. */
function failedStrategies(rows: readonly BenchRow[]): string {
  const failed = rows.filter((r) => r.failure != null && r.strategy !== null);
  if (failed.length === 0) return '';
  return `<section>
<h2>Strategies that failed</h2>
<p class="note">A strategy that fails costs only its own row, not the session's other strategies.</p>
${failureTable(['provider', 'session', 'strategy', 'code', 'why'], failed, (r) => [r.provider, r.session, r.strategy ?? '', r.error_code ?? '–', r.error ?? ''])}
</section>`;
}

function timelineLegend(): string {
  return `<div class="legend"><span><svg viewBox="0 0 14 14" aria-hidden="true"><line x1="1" x2="13" y1="7" y2="7" stroke="#0072B2" stroke-width="2.5"/></svg>estimated context (the transcript's items)</span><span><svg viewBox="0 0 14 14" aria-hidden="true"><polygon points="7,2 12,7 7,12 2,7" fill="#009E73"/></svg>context the client reported, which the trigger reads</span><span><svg viewBox="0 0 14 14" aria-hidden="true"><polygon points="2,3 12,3 7,12" fill="#D55E00"/></svg>compaction (before → after)</span><span><svg viewBox="0 0 14 14" aria-hidden="true"><line x1="1" x2="13" y1="7" y2="7" stroke="#D55E00" stroke-dasharray="3 2" stroke-width="1.5"/></svg>trigger</span></div>`;
}

export function renderBenchReportHtml(input: BenchReportInput): string {
  const title = input.title ?? 'Gobstopper bench report';
  const styles = strategyStyles(input.aggregates);
  const maxTimelines = input.max_timelines ?? 12;
  const span = (tl: SessionTimeline) => {
    const ts = tl.points.map((p) => p.t);
    return ts.length ? Math.max(...ts) - Math.min(...ts) : 0;
  };
  const charted = [...input.timelines].filter((tl) => tl.points.length + tl.compactions.length > 0).sort((a, b) => span(b) - span(a));
  const timelines = charted.slice(0, maxTimelines);
  const rendered = input.rows.filter((r) => r.execution_state === 'rendered').length;
  // Strategies that tie for the most sessions won are all named: the first alone would claim a lead it does not have.
  const mostBest = Math.max(0, ...input.aggregates.map((a) => a.sessions_best));
  const leaders = mostBest > 0 ? input.aggregates.filter((a) => a.sessions_best === mostBest).map((a) => esc(a.strategy)) : [];
  const stats = [
    [String(input.sessions_measured), 'sessions measured'],
    [String(input.sessions - input.sessions_measured), 'sessions failed'],
    [String(input.aggregates.length), 'strategies'],
    [String(rendered), 'rewrites rendered'],
    [leaders.length > 0 ? leaders.join(', ') : '–', leaders.length > 1 ? `most often best, tied at ${mostBest} each` : 'most often best'],
  ]
    .map(([v, l]) => `<div class="stat"><b>${v}</b><span>${l}</span></div>`)
    .join('');
  // Empty charts alone read as a broken report; the reason the command printed goes above them.
  const reason = nothingMeasuredReason(input, input.window ?? { kind: 'all' });
  const timelineSection =
    timelines.length === 0
      ? '<p class="empty">No context history was available for these sessions.</p>'
      : `<div class="multiples">${timelines
          // An unreadable log says nothing of a session's compactions: "0" would claim it had none.
          .map((tl) => `<figure>${timelineChart(tl)}<figcaption>${esc(tl.provider)} · ${esc(tl.session)} · ${input.events_unreadable ? 'gobstopper compactions unknown' : `${tl.compactions.length} gobstopper compaction${tl.compactions.length === 1 ? '' : 's'}`}</figcaption></figure>`)
          .join('')}</div>${timelineLegend()}${charted.length > timelines.length ? `<p class="note">Showing the ${timelines.length} longest-running of ${charted.length} sessions.</p>` : ''}`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)}</title>
<style>${CSS}</style>
</head>
<body>
<main>
<h1>${esc(title)}</h1>
<p class="lede">Generated ${esc(input.generated_at)}. Every strategy ran on private copies; nothing here contains transcript text.</p>
${reason === null ? '' : `<p class="why" role="status">${esc(reason)}</p>\n`}<div class="stats">${stats}</div>
<section>
<h2>Reduction against retention</h2>
<p class="note">Each faint mark is one session; the bold mark is the strategy's median, its bar the middle half of reductions. Up and to the right keeps more while reclaiming more.</p>
${scatterChart(input.rows, input.aggregates, styles)}
${scatterLegend(input.rows, input.aggregates, styles)}
</section>
<section>
<h2>How much each strategy reclaims</h2>
<p class="note">Reduction of the estimated context over the sessions where the strategy produced a plan; the right column gives sessions planned and the median share of probes kept.</p>
${boxChart(input.aggregates, styles)}
</section>
<section>
<h2>Context over time</h2>
<p class="note">Estimated context of each session as it grew, from its transcript's items, with the compactions gobstopper applied to it (from the events log). A client's own compactions are not marked: the line counts only the records still in context after the newest of them. Where the client reported the context, a diamond marks that figure: the trigger is compared with it.</p>
${input.events_unreadable ? `<p class="note">The events log could not be read (${esc(input.events_unreadable)}), so no compaction is marked.</p>\n` : ''}${timelineSection}
</section>
<section>
<h2>Per strategy</h2>
${summaryTable(input.aggregates, styles)}
<p class="note">Probes are short strings (paths, commands, decisions, error signatures, file names, identifiers) sampled from the source; kept means still present verbatim. Best means the highest reclaimed × (cached prefix / context)³ among clean file rewrites that keep the protected tail.</p>
</section>
${failedStrategies(input.rows)}
${failedSessions(input.rows)}
</main>
</body>
</html>
`;
}
