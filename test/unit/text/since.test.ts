import { describe, expect, it } from 'vitest';
import { futureSinceNote, parseSince } from '../../../kernel/text/since.js';

const now = 1_700_000_000;

describe('--since', () => {
  it('reads durations back from now; a bare number is seconds', () => {
    expect(parseSince('24h', now)).toBe(now - 86_400);
    expect(parseSince('30m', now)).toBe(now - 1800);
    expect(parseSince('7d', now)).toBe(now - 7 * 86_400);
    expect(parseSince('90', now)).toBe(now - 90);
    expect(parseSince(' 90s ', now)).toBe(now - 90);
  });

  it('reads dates and times as UTC unless an offset says otherwise', () => {
    expect(parseSince('2023-11-14T22:13:20Z', now)).toBe(1_700_000_000);
    expect(parseSince('2023-11-14T22:13:20', now)).toBe(1_700_000_000);
    expect(parseSince('2023-11-14 22:13:20.75', now)).toBe(1_700_000_000);
    expect(parseSince('2023-11-14T22:13', now)).toBe(1_700_000_000 - 20);
    expect(parseSince('2023-11-14', now)).toBe(Date.UTC(2023, 10, 14) / 1000);
    expect(parseSince('2023-11-15T00:13:20+02:00', now)).toBe(1_700_000_000);
    expect(parseSince('2023-11-14T20:13:20-0200', now)).toBe(1_700_000_000);
    expect(parseSince('2024-02-29', now)).toBe(Date.UTC(2024, 1, 29) / 1000);
  });

  it('refuses impossible dates instead of rolling them over to a real one', () => {
    expect(() => parseSince('2026-02-30T00:00:00Z', now)).toThrow(/2026-02 has no day 30/);
    expect(() => parseSince('2026-02-29', now)).toThrow(/has no day 29/);
    expect(() => parseSince('2026-04-31', now)).toThrow(/has no day 31/);
    expect(() => parseSince('2026-13-01', now)).toThrow(/out of range/);
    expect(() => parseSince('2026-01-01T24:00:00Z', now)).toThrow(/out of range/);
    expect(() => parseSince('2026-01-01T23:59:60Z', now)).toThrow(/out of range/);
    expect(() => parseSince('2026-01-01T10:00+24:00', now)).toThrow(/offset is out of range/);
  });

  it('reads a year under 100 as that year, not as 19xx, and starts such a window at the epoch', () => {
    expect(parseSince('0099-05-01', now)).toBe(0);
    expect(parseSince('0000-01-01T00:00:00Z', now)).toBe(0);
    expect(() => parseSince('0099-02-29', now)).toThrow(/0099-02 has no day 29/);
  });

  it('says why a bare number of ten digits or more is refused: a Unix time is no duration', () => {
    expect(() => parseSince('1796475000', now)).toThrow(/got "1796475000" \(a duration has at most 9 digits; for a point in time give a date, such as 2026-01-31T12:00:00Z\)$/);
    expect(() => parseSince('99999999999d', now)).toThrow(/at most 9 digits/);
    expect(parseSince('999999999', now)).toBe(now - 999_999_999);
  });

  it('refuses a bare eight-digit date instead of counting it as eight months of seconds', () => {
    expect(() => parseSince('20261207', now)).toThrow(/got "20261207" \(it reads as the date 2026-12-07: write the date so, or give seconds a unit \(20261207s\)\)$/);
    expect(parseSince('20261207s', now)).toBe(now - 20_261_207);
    // Not a date: a thirteenth month, a 31st of February's kind, another era.
    expect(parseSince('20261307', now)).toBe(now - 20_261_307);
    expect(parseSince('20260231', now)).toBe(now - 20_260_231);
    expect(parseSince('12345678', now)).toBe(now - 12_345_678);
  });

  it('refuses anything else with the invalid_since code', () => {
    for (const text of ['yesterday', '5w', '2026-12-01 (hello)', '2026-1-5', '', '-3h', '1e3']) {
      expect(() => parseSince(text, now), text).toThrow(expect.objectContaining({ code: 'invalid_since' }));
    }
  });

  it('a window that starts after now is said to, so an empty answer is not read as "nothing happened"', () => {
    expect(futureSinceNote(parseSince('2099-01-01', now), now)).toBe(', which is in the future (a date or time without an offset is UTC)');
    expect(futureSinceNote(parseSince('24h', now), now)).toBe('');
    expect(futureSinceNote(now, now)).toBe('');
  });
});
