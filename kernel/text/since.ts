/**
 * `--since`: the start of a time window, as a duration back from now or as a calendar time.
 * Date.parse is not used: it rolls impossible dates over (2026-02-30 became March 2nd) and reads a
 * time without a zone as local time, while every readout of the window says UTC.
 */
import { usageError } from '../errors.js';

const UNIT_SECONDS: Record<string, number> = { '': 1, s: 1, m: 60, h: 3600, d: 86400 };

const DURATION = /^(\d{1,9})([smhd]?)$/;
/** 2026-01-31, 2026-01-31T12:00, 2026-01-31 12:00:05.250, each optionally with Z or ±hh:mm. */
const CALENDAR = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/i;

export const SINCE_HELP = 'a duration back from now (90s, 30m, 24h, 7d; a bare number is seconds) or a UTC date or time (2026-01-31, 2026-01-31T12:00:00Z, or with an offset such as +02:00)';

function invalid(text: string, why?: string): Error {
  return usageError('invalid_since', `--since must be ${SINCE_HELP}; got ${JSON.stringify(text)}${why ? ` (${why})` : ''}`);
}

/** Minutes east of UTC of a `Z` or `±hh:mm` suffix, or null when it is out of range. */
function offsetMinutes(zone: string | undefined): number | null {
  if (zone === undefined || zone.toUpperCase() === 'Z') return 0;
  const digits = zone.slice(1).replace(':', '');
  const hours = Number(digits.slice(0, 2));
  const minutes = Number(digits.slice(2));
  if (hours > 23 || minutes > 59) return null;
  return (zone[0] === '-' ? -1 : 1) * (hours * 60 + minutes);
}

/**
 * `20261207` as `2026-12-07`, when a bare eight-digit number is a real date of this era: counted
 * as seconds it would start the window some eight months back, and nothing would say so.
 */
function compactDate(text: string): string | null {
  const match = /^(19[7-9]\d|20\d\d)(\d{2})(\d{2})$/.exec(text);
  if (!match) return null;
  const [year, month, day] = match.slice(1).map(Number) as [number, number, number];
  const at = new Date(Date.UTC(year, month - 1, day));
  return at.getUTCMonth() === month - 1 && at.getUTCDate() === day ? `${match[1]}-${match[2]}-${match[3]}` : null;
}

/** Unix seconds of the window start that `text` names. */
export function parseSince(text: string, nowSeconds: number): number {
  const trimmed = text.trim();
  const compact = compactDate(trimmed);
  if (compact !== null) throw invalid(text, `it reads as the date ${compact}: write the date so, or give seconds a unit (${trimmed}s)`);
  const duration = DURATION.exec(trimmed);
  if (duration) return Math.max(0, nowSeconds - Number(duration[1]) * UNIT_SECONDS[duration[2]!]!);
  // Ten digits and more are no duration worth counting back; most likely a Unix time was meant.
  if (/^\d{10,}[smhd]?$/.test(trimmed)) throw invalid(text, 'a duration has at most 9 digits; for a point in time give a date, such as 2026-01-31T12:00:00Z');
  const calendar = CALENDAR.exec(trimmed);
  if (!calendar) throw invalid(text);
  const [year, month, day, hour, minute, second] = calendar.slice(1, 7).map((part) => (part === undefined ? 0 : Number(part)));
  if (month! < 1 || month! > 12 || hour! > 23 || minute! > 59 || second! > 59) throw invalid(text, 'a field is out of range');
  // Not Date.UTC, which reads the years 0-99 as 1900-1999 (and "0099-05 has no day 01" would follow).
  const at = new Date(0);
  at.setUTCFullYear(year!, month! - 1, day!);
  at.setUTCHours(hour!, minute!, second!, 0);
  // The date rolls over (February 30th becomes March 2nd); the day must survive unchanged.
  if (at.getUTCFullYear() !== year || at.getUTCMonth() !== month! - 1 || at.getUTCDate() !== day) throw invalid(text, `${calendar[1]}-${calendar[2]} has no day ${calendar[3]}`);
  const offset = offsetMinutes(calendar[7]);
  if (offset === null) throw invalid(text, 'the offset is out of range');
  return Math.max(0, Math.floor(at.getTime() / 1000) - offset * 60);
}

/**
 * Said beside a window that found nothing when it starts after now: a date typed a year ahead, or a
 * local time read as UTC, otherwise reads as "there is nothing", not "you asked for the future".
 */
export function futureSinceNote(since: number, nowSeconds: number): string {
  return since > nowSeconds ? ', which is in the future (a date or time without an offset is UTC)' : '';
}
