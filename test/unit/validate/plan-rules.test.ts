/**
 * The admission rules every plan passes, as named cases. Each case is a plan a strategy (built-in or
 * installed) might propose and the exact error the host answers with.
 */
import { describe, expect, it } from 'vitest';
import type { DigestBlock, Edit, TranscriptItem } from '../../../schemas/generated/types.js';
import { admitProposal } from '../../../kernel/policy/admit-proposal.js';
import { defaultPolicy } from '../../../kernel/policy/defaults.js';
import { toResolvedPolicy } from '../../../kernel/policy/effective-policy.js';
import { PlanRejections, type PlanRejectionCode } from '../../../kernel/validate/plan-errors.js';
import { prepareAdmission, protectedTail } from '../../../kernel/validate/edit-rules.js';
import { isGobstopperError } from '../../../kernel/errors.js';
import { item, toolSession, transcriptOf } from '../policy/transcript-builder.js';

const STUB = '[output elided by gobstopper: {bytes} bytes]';
// 12 tool results on lines 2, 4, ... 24; with keep_recent_tool_outputs = 8 the newest eight (10..24) are protected.
const ITEMS = toolSession(12, 4000);
const UNPROTECTED = [2, 4, 6, 8];

const elide = (line_indexes: number[], extra: Partial<Extract<Edit, { op: 'elide' }>> = {}): Edit => ({ op: 'elide', line_indexes, stub_template: STUB, ...extra });
const card = (extra: Partial<DigestBlock> = {}): Edit => ({ op: 'inject_digest', digest: { covers_items: 2, summary: 'state', ...extra } });
const control = (text = 'codex app-server: thread/compact/start'): Edit => ({ op: 'provider_compact', control: text });
const cacheEdit = (tool_use_ids: string[]): Edit => ({ op: 'cache_edit', tool_use_ids });

interface Case {
  name: string;
  edits: Edit[];
  items?: TranscriptItem[];
  provider?: string;
  keep?: number;
  expected: PlanRejectionCode | 'ok';
  /** The part of the rule this plan broke, as the message says it after the rule's text. */
  why?: string;
}

const cases: Case[] = [
  { name: 'stale outputs may be elided', edits: [elide(UNPROTECTED)], expected: 'ok' },
  { name: 'an elision may carry one card', edits: [elide([2, 4]), card()], expected: 'ok' },
  { name: 'per-item stubs may replace the template', edits: [elide([2, 4], { per_item_stubs: { '2': 'listed 40 files' } })], expected: 'ok' },
  { name: 'a card at the 32,768-byte limit is fine', edits: [elide(UNPROTECTED), card({ summary: null, goal: 'g'.repeat(32_768) })], items: toolSession(12, 40_000), expected: 'ok' },
  { name: 'a provider control alone is fine', edits: [control()], expected: 'ok' },
  { name: 'a Claude cache edit of known ids is fine', edits: [cacheEdit(['toolu_0', 'toolu_1'])], provider: 'claude_code', expected: 'ok' },

  { name: 'at most 64 edits', edits: Array.from({ length: 65 }, (_, i) => elide([2 + 0 * i])), expected: 'plan_exceeds_item_limits' },
  { name: 'at most 100,000 items', edits: [elide([2])], items: Array.from({ length: 100_001 }, (_, i) => item(i, 'tool_result', 100, { elidable_bytes: 400 })), expected: 'plan_exceeds_item_limits' },
  { name: 'line indexes identify one record', edits: [elide([2])], items: [...ITEMS, item(2, 'tool_result', 900, { elidable_bytes: 3600 })], expected: 'ambiguous_transcript_indexes' },
  { name: 'edits have a known shape', edits: [{ op: 'rewrite', line_indexes: [2] } as unknown as Edit], expected: 'invalid_edit_shape', why: 'edit 0 /op must be one of "elide", "inject_digest", "provider_compact", "cache_edit"' },
  { name: 'an elide edit names at least one line', edits: [elide([])], expected: 'invalid_edit_shape' },

  { name: 'one card', edits: [elide([2]), card(), card()], expected: 'invalid_edit_composition', why: 'a plan may hold one inject_digest (state card); edit 2 is a second' },
  { name: 'a control edit comes alone (after an elision)', edits: [elide([2]), control()], expected: 'invalid_edit_composition', why: "a provider_compact edit must be the plan's only edit; edit 1 comes after another edit" },
  { name: 'nothing follows a cache edit composition-wise', edits: [elide([2]), cacheEdit(['toolu_0'])], provider: 'claude_code', expected: 'invalid_edit_composition' },
  { name: 'a provider control first but not alone', edits: [control(), elide([2])], expected: 'invalid_provider_control' },
  { name: 'a cache edit first but not alone', edits: [cacheEdit(['toolu_0']), elide([2])], provider: 'claude_code', expected: 'invalid_cache_edit' },

  { name: 'stub template at most 96 bytes', edits: [elide([2], { stub_template: 'x'.repeat(97) })], expected: 'invalid_elision_bounds', why: 'stub template is 97 bytes; the limit is 96' },
  { name: 'stub template may not use {kind}', edits: [elide([2], { stub_template: '[{kind} elided: {bytes}]' })], expected: 'invalid_elision_bounds' },
  { name: 'stub template is one line', edits: [elide([2], { stub_template: 'elided\n{bytes}' })], expected: 'invalid_elision_bounds' },
  { name: 'no more per-item stubs than lines', edits: [elide([2], { per_item_stubs: { '2': 'a', '4': 'b' } })], expected: 'invalid_elision_bounds' },
  { name: 'per-item stubs only for lines of the same edit', edits: [elide([2, 4], { per_item_stubs: { '6': 'a' } })], expected: 'invalid_elision_bounds' },
  { name: 'per-item stub not empty', edits: [elide([2], { per_item_stubs: { '2': '' } })], expected: 'invalid_elision_bounds' },
  { name: 'per-item stub at most 200 bytes', edits: [elide([2], { per_item_stubs: { '2': 'é'.repeat(101) } })], expected: 'invalid_elision_bounds', why: 'per-item stub for line 3 is 202 bytes; the limit is 200' },
  { name: 'per-item stub has no control characters', edits: [elide([2], { per_item_stubs: { '2': 'tab\there' } })], expected: 'invalid_elision_bounds' },
  { name: 'at most 100,000 lines per elision', edits: [elide(Array.from({ length: 100_001 }, (_, i) => i))], expected: 'invalid_elision_bounds' },

  { name: 'targets exist', edits: [elide([2, 999])], expected: 'unknown_edit_index' },
  { name: 'protected tail untouched', edits: [elide([2, 24])], expected: 'protected_or_non_elidable', why: 'line 25 is in the protected tail: keep_recent_tool_outputs = 8 keeps the newest 8 tool outputs' },
  { name: 'the oldest protected output is protected too', edits: [elide([10])], expected: 'protected_or_non_elidable' },
  { name: 'only elidable payloads are elided', edits: [elide([1])], expected: 'protected_or_non_elidable', why: 'line 2 holds nothing elidable: it is a tool_call record' },
  {
    name: 'the reason reads as English for every kind',
    edits: [elide([1])],
    items: ITEMS.map((i) => (i.line_index === 1 ? { ...i, kind: 'assistant' as const } : i)),
    expected: 'protected_or_non_elidable',
    why: 'line 2 holds nothing elidable: it is an assistant record',
  },
  {
    name: 'and "a user record", not "an user record"',
    edits: [elide([1])],
    items: ITEMS.map((i) => (i.line_index === 1 ? { ...i, kind: 'user' as const } : i)),
    expected: 'protected_or_non_elidable',
    why: 'line 2 holds nothing elidable: it is a user record',
  },
  {
    name: 'records outside the live context are not elided',
    edits: [elide([2])],
    items: ITEMS.map((i) => (i.line_index === 2 ? { ...i, est_tokens: 0 } : i)),
    expected: 'protected_or_non_elidable',
  },
  { name: 'no overlap between elisions', edits: [elide([2, 4]), elide([4, 6])], expected: 'overlapping_elision_edits', why: 'line 5 is elided by an earlier edit too' },
  { name: 'no line twice in one elision', edits: [elide([2, 2])], expected: 'overlapping_elision_edits', why: 'line 3 is elided twice in this edit' },
  { name: 'with nothing protected the tail may go', edits: [elide([22, 24])], keep: 0, expected: 'ok' },

  { name: 'card text at most 32,768 bytes', edits: [elide(UNPROTECTED), card({ summary: null, goal: 'g'.repeat(32_000), decisions: ['d'.repeat(769)] })], expected: 'invalid_digest_bounds', why: 'state card is 32,769 bytes; the limit is 32,768' },
  { name: 'card covers at least one record', edits: [elide([2]), card({ covers_items: 0 })], expected: 'invalid_digest_bounds' },
  { name: 'card covers no more records than exist', edits: [elide([2]), card({ covers_items: ITEMS.length + 1 })], expected: 'invalid_digest_bounds' },

  { name: 'provider control not empty', edits: [control('')], expected: 'invalid_provider_control' },
  { name: 'provider control at most 256 bytes', edits: [control('c'.repeat(257))], expected: 'invalid_provider_control' },
  { name: 'provider control has no control characters', edits: [control('/compact\u0007')], expected: 'invalid_provider_control' },

  { name: 'cache edits are Claude-only', edits: [cacheEdit(['toolu_0'])], provider: 'codex', expected: 'invalid_cache_edit', why: 'cache_edit is for claude_code sessions only; this is a codex session' },
  { name: 'a cache edit names at least one id', edits: [cacheEdit([])], provider: 'claude_code', expected: 'invalid_cache_edit' },
  { name: 'cache edit ids are known', edits: [cacheEdit(['toolu_0', 'toolu_404'])], provider: 'claude_code', expected: 'invalid_cache_edit_tool_use_id' },
  { name: 'cache edit ids are plain', edits: [cacheEdit(['toolu 0'])], provider: 'claude_code', expected: 'invalid_cache_edit_tool_use_id' },
  { name: 'cache edit ids are not repeated', edits: [cacheEdit(['toolu_0', 'toolu_0'])], provider: 'claude_code', expected: 'invalid_cache_edit_tool_use_id' },
  { name: 'cache edit ids at most 256 bytes', edits: [cacheEdit(['t'.repeat(257)])], provider: 'claude_code', expected: 'invalid_cache_edit_tool_use_id' },

  { name: 'no growth: a card alone adds tokens', edits: [card()], expected: 'plan_grows_context' },
  {
    name: 'no growth: eliding a payload no larger than its stub',
    edits: [elide([2])],
    items: ITEMS.map((i) => (i.line_index === 2 ? { ...i, elidable_bytes: 96, est_tokens: 30 } : i)),
    expected: 'plan_grows_context',
  },
  { name: 'no growth: a cache edit must drop something', edits: [cacheEdit(['toolu_0'])], provider: 'claude_code', items: ITEMS.map((i) => (i.kind === 'tool_result' ? { ...i, tool_use_ids: [] } : i)), expected: 'plan_grows_context' },
];

/** Admits a case's plan; `prepared`: with the items indexed ahead (prepareAdmission), as plan does while a strategy works. */
function admit(c: Case, prepared = false) {
  const items = c.items ?? ITEMS;
  if (prepared) prepareAdmission(items, c.keep ?? 8);
  const transcript = transcriptOf(items, { provider: c.provider ?? 'codex' });
  const policy = toResolvedPolicy({ ...defaultPolicy(), min_savings_tokens: 0, keep_recent_tool_outputs: c.keep ?? 8 });
  const before = items.reduce((sum, i) => sum + i.est_tokens, 0);
  return admitProposal({ transcript, policy, context_tokens_before: before, proposal: { edits: c.edits, rationale: 'test', strategy: 'test', source: 'strategy' } });
}

describe.each([
  ['', false],
  [', with the items indexed ahead', true],
])('plan admission rules%s', (_, prepared) => {
  it.each(cases)('$name', (c) => {
    if (c.expected === 'ok') {
      expect(admit(c, prepared).status).toBe('plan');
      return;
    }
    let thrown: unknown;
    try {
      admit(c, prepared);
    } catch (error) {
      thrown = error;
    }
    expect(isGobstopperError(thrown), `expected ${c.expected}`).toBe(true);
    const error = thrown as { code: string; message: string; exit: number; details: { why: string } };
    expect(error.code).toBe(c.expected);
    // The rule's exact text first (scripts match it), then why, which the details carry too.
    expect(error.message).toBe(`${PlanRejections[c.expected]}: ${error.details.why}`);
    if (c.why !== undefined) expect(error.details.why).toBe(c.why);
    expect(error.exit).toBe(1);
  });

  it('uses the exact messages of the original', () => {
    expect(PlanRejections).toMatchObject({
      plan_exceeds_item_limits: 'plan exceeds item limits',
      ambiguous_transcript_indexes: 'ambiguous transcript indexes',
      invalid_edit_composition: 'invalid edit composition',
      invalid_elision_bounds: 'invalid elision bounds or stub template',
      unknown_edit_index: 'unknown edit index',
      protected_or_non_elidable: 'edit targets protected or non-elidable content',
      overlapping_elision_edits: 'overlapping elision edits',
      invalid_digest_bounds: 'invalid digest bounds',
      invalid_provider_control: 'invalid provider control',
      invalid_cache_edit: 'invalid cache edit',
      invalid_cache_edit_tool_use_id: 'invalid cache edit tool_use_id',
    });
  });

  it('says where a rule broke, in numbers only', () => {
    try {
      admit({ name: 'x', edits: [elide([2]), elide([4, 999])], expected: 'unknown_edit_index' });
      expect.unreachable();
    } catch (error) {
      expect((error as { details: unknown }).details).toEqual({ rule: 'unknown_edit_index', why: 'line 1000 is not a record of this transcript, which has 26', edit_index: 1, line_index: 999 });
    }
  });

  it('protects the newest elidable records by count, skipping non-elidable ones', () => {
    const items = [
      item(0, 'tool_result', 100, { elidable_bytes: 400 }),
      item(1, 'tool_result', 100, { elidable_bytes: 400 }),
      item(2, 'assistant', 100),
      item(3, 'tool_result', 0, { elidable_bytes: 400 }),
      item(4, 'tool_result', 100, { elidable_bytes: 400 }),
    ];
    expect([...protectedTail(items, 2)].sort()).toEqual([1, 4]);
    expect(protectedTail(items, 0).size).toBe(0);
    expect(protectedTail(items, 10).size).toBe(3);
  });
});
