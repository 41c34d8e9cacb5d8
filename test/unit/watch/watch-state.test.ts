import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { forgetLapsed, loadWatchState, saveWatchState, watchScope, watchStatePath, type WatchEntry } from '../../../kernel/watch/watch-state.js';
import { makeTempHome, type TempHome } from '../../helpers/temp-home.js';

let home: TempHome | undefined;
afterEach(() => home?.cleanup());

const NOW = 1_800_000_000;
const entry = (decided_at: number): WatchEntry => ({ provider: 'codex', session_id: 'r1', fingerprint: { bytes: 5, mtime_ms: 6, ino: 7 }, policy: 'abc', outcome: 'compacted', decided_at, applied_at: decided_at });

describe('watch state', () => {
  it('is kept per set of providers, in the data directory', () => {
    expect(watchScope(undefined)).toBe('all');
    expect(watchScope(['codex', 'claude_code', 'codex'])).toBe('claude_code+codex');
    expect(watchStatePath({ XDG_DATA_HOME: '/d', HOME: '/h' }, 'codex')).toBe('/d/gobstopper/watch-state-codex.json');
  });

  it('round-trips as a private file and forgets decisions older than a day, except a compaction', async () => {
    home = makeTempHome();
    const path = watchStatePath(home.env, 'all');
    const state = await loadWatchState(path, NOW);
    expect(state.entries.size).toBe(0);
    expect(state.discarded).toBeNull();
    state.entries.set('a', entry(NOW - 10));
    state.entries.set('b', { ...entry(NOW - 90_000), outcome: 'no_plan' });
    state.entries.set('c', entry(NOW - 90_000));
    await saveWatchState(state);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const back = await loadWatchState(path, NOW);
    expect([...back.entries.keys()]).toEqual(['a', 'c']);
    expect(back.entries.get('a')).toEqual(entry(NOW - 10));
  });

  it('keeps a compaction past the day only while its file is listed', () => {
    const state = { path: '/x', discarded: null, looseTablesSaid: new Set<string>(), neverFiresSaid: new Set<string>(), nothingToWatchSaid: null, saveFailureSaid: null, receiptsSaid: null, unreadableSaid: null, aheadSaid: null, entries: new Map([['listed', entry(NOW - 90_000)], ['unlisted', entry(NOW - 90_000)], ['recent', entry(NOW - 10)]]) };
    forgetLapsed(state, new Set(['listed']), NOW);
    expect([...state.entries.keys()]).toEqual(['listed', 'recent']);
  });

  it('says why it could not use a stored state, and drops entries it cannot read', async () => {
    home = makeTempHome();
    const path = join(home.dataHome, 'watch.json');
    writeFileSync(path, 'not json');
    expect((await loadWatchState(path, NOW)).discarded).toContain('is not valid JSON');
    writeFileSync(path, JSON.stringify({ schema: 'other', entries: {} }));
    expect((await loadWatchState(path, NOW)).discarded).toContain('is not a gobstopper/watch-state-v1 file');
    // A list where the entries belong is not a state with none: it is said, as any other damage.
    writeFileSync(path, JSON.stringify({ schema: 'gobstopper/watch-state-v1', entries: [1, 2, 3] }));
    expect((await loadWatchState(path, NOW)).discarded).toContain('is not a gobstopper/watch-state-v1 file');
    writeFileSync(path, JSON.stringify({ schema: 'gobstopper/watch-state-v1', entries: { good: entry(NOW), bad: { ...entry(NOW), fingerprint: { bytes: -1 } } } }));
    const mixed = await loadWatchState(path, NOW);
    expect(mixed.discarded).toBeNull();
    expect([...mixed.entries.keys()]).toEqual(['good']);
    // Stamped in the future (a clock set back), a decision's age cannot be told.
    writeFileSync(path, JSON.stringify({ schema: 'gobstopper/watch-state-v1', entries: { good: entry(NOW), decided: entry(NOW + 3600), applied: { ...entry(NOW), applied_at: NOW + 3600 } } }));
    expect([...(await loadWatchState(path, NOW)).entries.keys()]).toEqual(['good']);
  });
});
