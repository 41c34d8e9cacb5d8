import { describe, expect, it } from 'vitest';
import type { DetectRow } from '../../../schemas/generated/types.js';
import { triage, type TriageInput } from '../../../kernel/watch/triage.js';
import type { WatchEntry } from '../../../kernel/watch/watch-state.js';

const NOW = 1_800_000_000;
const file = { bytes: 1000, mtime_ms: 1_799_999_000_000, ino: 7 };
const row = (over: Partial<DetectRow> = {}): DetectRow => ({
  provider: 'claude_code',
  session_id: 's1',
  path: '/h/s1.jsonl',
  cwd: null,
  active: false,
  age_secs: 3600,
  bytes: 1000,
  context_tokens: 150_000,
  context_basis: 'reported',
  context_state: 'reported',
  model_context_window: 200_000,
  lifetime_input_tokens: null,
  lifetime_cached_tokens: null,
  lifetime_scope: 'absent',
  ...over,
});
const entry = (over: Partial<WatchEntry> = {}): WatchEntry => ({ provider: 'claude_code', session_id: 's1', fingerprint: file, policy: 'p1', outcome: 'no_plan', decided_at: NOW - 60, ...over });
const input = (over: Partial<TriageInput> = {}): TriageInput => ({
  row: row(),
  fingerprint: file,
  entry: undefined,
  policy: 'p1',
  unresumedPublication: false,
  effectiveTrigger: 100_000,
  adaptive: false,
  minIntervalSecs: 300,
  nowSecs: NOW,
  ...over,
});

describe('watch triage', () => {
  it('evaluates an idle session over its trigger that it has not decided on', () => {
    expect(triage(input())).toEqual({ kind: 'evaluate' });
  });

  it('passes over what is gone, published and unresumed, or live', () => {
    expect(triage(input({ fingerprint: null }))).toEqual({ kind: 'skip', reason: 'gone' });
    expect(triage(input({ unresumedPublication: true }))).toEqual({ kind: 'skip', reason: 'published' });
    expect(triage(input({ row: row({ active: true, context_tokens: 50_000 }) }))).toEqual({ kind: 'skip', reason: 'live' });
  });

  it('names a live session over its trigger once per live spell', () => {
    const live = row({ active: true });
    expect(triage(input({ row: live }))).toEqual({ kind: 'decided', outcome: 'live_over_trigger' });
    expect(triage(input({ row: live, entry: entry({ outcome: 'live_over_trigger' }) }))).toEqual({ kind: 'skip', reason: 'live' });
    // Once decided on idle, a new live spell is named again.
    expect(triage(input({ row: live, entry: entry({ outcome: 'compacted' }) }))).toEqual({ kind: 'decided', outcome: 'live_over_trigger' });
  });

  it('settles a file unchanged since a final decision under the same policy, for a day', () => {
    expect(triage(input({ entry: entry() }))).toEqual({ kind: 'skip', reason: 'settled' });
    expect(triage(input({ entry: entry(), fingerprint: { ...file, bytes: 1001 } }))).toEqual({ kind: 'evaluate' });
    expect(triage(input({ entry: entry(), fingerprint: { ...file, ino: 8 } }))).toEqual({ kind: 'evaluate' });
    expect(triage(input({ entry: entry({ decided_at: NOW - 86_401 }) }))).toEqual({ kind: 'evaluate' });
    // The day includes both its ends: decided this very second, or exactly a day ago.
    expect(triage(input({ entry: entry({ decided_at: NOW - 86_400 }) }))).toEqual({ kind: 'skip', reason: 'settled' });
    expect(triage(input({ entry: entry({ decided_at: NOW }) }))).toEqual({ kind: 'skip', reason: 'settled' });
    // A transient note is no decision.
    expect(triage(input({ entry: entry({ outcome: 'live_over_trigger' }) }))).toEqual({ kind: 'evaluate' });
  });

  it('decides again under a new policy, except for a file already compacted and unchanged', () => {
    expect(triage(input({ entry: entry({ outcome: 'no_plan' }), policy: 'p2' }))).toEqual({ kind: 'evaluate' });
    expect(triage(input({ entry: entry({ outcome: 'failed' }), policy: 'p2' }))).toEqual({ kind: 'evaluate' });
    expect(triage(input({ entry: entry({ outcome: 'compacted', applied_at: NOW - 4000 }), policy: 'p2' }))).toEqual({ kind: 'skip', reason: 'settled' });
  });

  it('keeps a compaction of an unchanged file settled past the day, whatever the policy', () => {
    const old = entry({ outcome: 'compacted', decided_at: NOW - 200_000, applied_at: NOW - 200_000 });
    expect(triage(input({ entry: old }))).toEqual({ kind: 'skip', reason: 'settled' });
    expect(triage(input({ entry: old, policy: 'p2' }))).toEqual({ kind: 'skip', reason: 'settled' });
    expect(triage(input({ entry: old, fingerprint: { ...file, bytes: 2000 } }))).toEqual({ kind: 'evaluate' });
  });

  it('holds a changed file compacted less than min_interval_secs ago', () => {
    const changed = { ...file, bytes: 2000 };
    const recent = entry({ outcome: 'compacted', applied_at: NOW - 299 });
    expect(triage(input({ entry: recent, fingerprint: changed }))).toEqual({ kind: 'skip', reason: 'rate_limited' });
    expect(triage(input({ entry: recent, fingerprint: changed, minIntervalSecs: 0 }))).toEqual({ kind: 'evaluate' });
    expect(triage(input({ entry: { ...recent, applied_at: NOW - 300 }, fingerprint: changed }))).toEqual({ kind: 'evaluate' });
    // Compacted this very second: held too.
    expect(triage(input({ entry: { ...recent, applied_at: NOW }, fingerprint: changed }))).toEqual({ kind: 'skip', reason: 'rate_limited' });
  });

  it('holds a session compacted less than min_interval_secs ago by any command, as the events log says', () => {
    // Written to 200 s ago, after a compaction 299 s ago: held; 300 s ago: looked at.
    const written = { ...file, mtime_ms: (NOW - 200) * 1000 };
    expect(triage(input({ fingerprint: written, lastAppliedSecs: NOW - 299 }))).toEqual({ kind: 'skip', reason: 'rate_limited' });
    expect(triage(input({ fingerprint: written, lastAppliedSecs: NOW - 300 }))).toEqual({ kind: 'evaluate' });
    // Not written to since that compaction: looked at, to find the fork it published.
    expect(triage(input({ fingerprint: { ...file, mtime_ms: (NOW - 250) * 1000 }, lastAppliedSecs: NOW - 200 }))).toEqual({ kind: 'evaluate' });
    // A log stamp from the future does not hide the state's own, nor the other way round.
    const changed = { ...file, bytes: 2000 };
    expect(triage(input({ entry: entry({ outcome: 'compacted', applied_at: NOW - 10 }), fingerprint: changed, lastAppliedSecs: NOW + 3600 }))).toEqual({ kind: 'skip', reason: 'rate_limited' });
    expect(triage(input({ entry: entry({ outcome: 'compacted', applied_at: NOW + 3600 }), fingerprint: { ...changed, mtime_ms: (NOW - 5) * 1000 }, lastAppliedSecs: NOW - 10 }))).toEqual({ kind: 'skip', reason: 'rate_limited' });
  });

  it('trusts no decision or compaction stamped in the future (a clock set back)', () => {
    const changed = { ...file, bytes: 2000 };
    expect(triage(input({ entry: entry({ decided_at: NOW + 3600 }) }))).toEqual({ kind: 'evaluate' });
    expect(triage(input({ entry: entry({ outcome: 'compacted', decided_at: NOW - 60, applied_at: NOW + 3600 }), fingerprint: changed }))).toEqual({ kind: 'evaluate' });
  });

  it('rules out a reported context under the trigger without the transcript, and nothing else', () => {
    expect(triage(input({ row: row({ context_tokens: 99_999 }) }))).toEqual({ kind: 'decided', outcome: 'below_trigger' });
    // At the trigger is over it, as plan counts it: watch must not rule out what plan would compact.
    expect(triage(input({ row: row({ context_tokens: 100_000 }) }))).toEqual({ kind: 'evaluate' });
    expect(triage(input({ row: row({ context_tokens: 100_000, active: true }) }))).toEqual({ kind: 'decided', outcome: 'live_over_trigger' });
    // Adaptive tuning may lower the trigger from what the transcript holds; an estimate may be low.
    expect(triage(input({ row: row({ context_tokens: 99_999 }), adaptive: true }))).toEqual({ kind: 'evaluate' });
    expect(triage(input({ row: row({ context_tokens: 99_999, context_basis: 'estimated' }) }))).toEqual({ kind: 'evaluate' });
    expect(triage(input({ row: row({ context_tokens: null, context_basis: 'unknown' }) }))).toEqual({ kind: 'evaluate' });
  });
});
