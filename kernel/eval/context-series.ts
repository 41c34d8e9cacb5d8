/**
 * A session's estimated context as it grew, for the report's timelines: the running sum of live
 * items' estimated tokens, stamped with each record's own `timestamp`. Compaction points come from
 * the caller (the events log, or measured plans), since a file alone cannot say when one happened.
 */
import type { TranscriptItem } from '../../schemas/generated/types.js';
import type { ContextPoint } from './report-html.js';
import { STATE_CARD_MARKER } from '../../sdk/state-card.js';

const TIMESTAMP_KEY = Buffer.from('"timestamp":');
/** A state card's line: its stamp is when a compaction wrote it, not a turn of the session. */
const CARD_MARKER = Buffer.from(JSON.stringify(STATE_CARD_MARKER).slice(1, -1));
/** Enough points for a 360-pixel-wide chart; more only adds markup. */
export const MAX_SERIES_POINTS = 400;

function recordTime(line: Buffer): number | null {
  const at = line.indexOf(TIMESTAMP_KEY);
  if (at === -1) return null;
  let i = at + TIMESTAMP_KEY.length;
  while (line[i] === 0x20) i++;
  if (line[i] === 0x22) {
    const end = line.indexOf(0x22, i + 1);
    if (end === -1 || end - i > 64) return null;
    const t = Date.parse(line.toString('latin1', i + 1, end));
    return Number.isFinite(t) ? t : null;
  }
  let j = i;
  while (j < line.length && line[j]! >= 0x30 && line[j]! <= 0x39) j++;
  if (j === i) return null;
  const n = Number(line.toString('latin1', i, j));
  // Seconds or milliseconds since the epoch.
  return n < 1e11 ? n * 1000 : n;
}

export function contextSeriesFromSource(source: Buffer, items: readonly TranscriptItem[]): ContextPoint[] {
  const tokensByLine = new Map<number, number>();
  for (const item of items) if (item.est_tokens > 0) tokensByLine.set(item.line_index, (tokensByLine.get(item.line_index) ?? 0) + item.est_tokens);
  const points: ContextPoint[] = [];
  let running = 0;
  let start = 0;
  let index = 0;
  let lastT = -Infinity;
  while (start < source.length) {
    let end = source.indexOf(0x0a, start);
    if (end === -1) end = source.length;
    const tokens = tokensByLine.get(index);
    if (tokens !== undefined) {
      running += tokens;
      const line = source.subarray(start, end);
      // A card gobstopper wrote into an old session is stamped with the day of the compaction: taken
      // as a point, it would stretch the time axis from the session's last turn to that day.
      // Its tokens count from the last turn's time.
      const t = line.includes(CARD_MARKER) ? (Number.isFinite(lastT) ? lastT : null) : recordTime(line);
      // Out-of-order stamps (resumed sessions, clock skew) would draw the line backwards.
      if (t !== null && t >= lastT) {
        points.push({ t, context_tokens: running });
        lastT = t;
      }
    }
    start = end + 1;
    index += 1;
  }
  return downsample(points, MAX_SERIES_POINTS);
}

/** Keeps the first and last points and an even spread between. */
export function downsample(points: ContextPoint[], max: number): ContextPoint[] {
  if (points.length <= max) return points;
  const out: ContextPoint[] = [];
  const step = (points.length - 1) / (max - 1);
  for (let i = 0; i < max; i++) out.push(points[Math.round(i * step)]!);
  return out;
}
