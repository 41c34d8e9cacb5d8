import { describe, expect, it } from 'vitest';
import { digestTextBytes, MAX_DIGEST_BYTES, parseStateCard, renderStateCard, STATE_CARD_MARKER } from '../../../sdk/state-card.js';
import { hasValidToolUseIds, protectedLines, staleCandidates, toolName } from '../../../sdk/strategy/candidates.js';
import { chooseWithDigest } from '../../../sdk/strategy/choose-with-digest.js';
import { cardContext, cardSummary, stateCardDigest } from '../../../sdk/strategy/state-card-digest.js';
import { clipUtf8 } from '../../../sdk/utf8.js';
import { TranscriptBuilder } from '../../fixtures/transcripts/builder.js';
import { codingSession } from '../../fixtures/transcripts/sessions.js';

describe('candidate selection helpers', () => {
  it('takes the tool name up to the first ( or space, lowercased', () => {
    expect(['Bash(npm test)', 'read_file a', 'WebFetch', 'mcp__x(y z)'].map(toolName)).toEqual(['bash', 'read_file', 'webfetch', 'mcp__x']);
  });

  it('protects the newest elidable items by count, like the host validator', () => {
    const b = new TranscriptBuilder();
    b.toolResult({ label: 'A', bytes: 4000 }); // 0
    b.toolResult({ label: 'B', bytes: 40 }); // 1: tiny, still elidable, still counted
    b.deadResult('C', 4000); // 2: no live tokens, never counted
    b.toolResult({ label: 'D', bytes: 4000 }); // 3
    expect(protectedLines(b.items, 2)).toEqual(new Set([1, 3]));
    expect(staleCandidates(b.items, 1).map((i) => i.line_index)).toEqual([0]);
  });

  it('accepts tool_use ids only in the host alphabet', () => {
    const item = (ids: string[]) => ({ line_index: 0, kind: 'tool_result' as const, est_tokens: 1, label: 'x', tool_use_ids: ids });
    expect(hasValidToolUseIds(item(['toolu_01A.b-c']))).toBe(true);
    expect(hasValidToolUseIds(item(['ok', 'not ok']))).toBe(false);
    expect(hasValidToolUseIds(item([]))).toBe(false);
  });
});

describe('state card digest', () => {
  it('says "1 earlier record" for one, and reads back cards written either way', () => {
    const one = renderStateCard({ covers_items: 1, goal: 'Fix it' });
    expect(one).toMatch(/^\(covers 1 earlier record\)$/m);
    expect(parseStateCard(one)).toMatchObject({ covers_items: 1, goal: 'Fix it' });
    // Cards written before the singular (archived in vaults) still parse.
    expect(parseStateCard(one.replace('earlier record)', 'earlier records)'))).toMatchObject({ covers_items: 1 });
    expect(parseStateCard(renderStateCard({ covers_items: 3 }))).toMatchObject({ covers_items: 3 });
  });

  it('sorts chosen records into sections, first match wins', () => {
    const b = new TranscriptBuilder();
    b.user('<command-name>/clear</command-name>'); // 0: a wrapper, not a goal
    b.user('ship the release'); // 1
    b.user(`${STATE_CARD_MARKER} goal: old`); // 2: an earlier card
    b.toolResult({ label: 'Bash(make)', bytes: 4000, summary: 'make: permission denied' }); // 3 error
    b.toolResult({ label: 'Bash(todo)', bytes: 4000, summary: 'FIXME left in parser' }); // 4 open task
    b.toolResult({ label: 'Read(a.ts)', bytes: 4000, summary: null }); // 5 tool result -> files, by label
    b.system({ summary: 'chose sqlite over postgres' }); // 6 decision
    b.system({ summary: 'docs/adr/0001.md' }); // 7 path -> files
    b.assistant(`${STATE_CARD_MARKER} current`); // 8 newest assistant is a card: no current work
    const digest = stateCardDigest(b.items, [3, 4, 5, 6, 7], 'codex');
    expect(digest).toEqual({
      goal: 'ship the release',
      summary: 'ship the release',
      concepts: ['bash', 'read', 'system'],
      files_touched: ['Read(a.ts)', 'docs/adr/0001.md'],
      decisions: ['chose sqlite over postgres'],
      errors: ['make: permission denied'],
      open_tasks: ['FIXME left in parser'],
      current_work: null,
      context: 'provider: codex',
      covers_items: 5,
    });
  });

  it('caps each list at the first 8 in line order and concepts at the 8 smallest names', () => {
    const b = new TranscriptBuilder();
    const lines: number[] = [];
    for (let i = 0; i < 12; i++) lines.push(b.toolResult({ label: `Tool${String.fromCharCode(108 - i)}`, bytes: 4000, summary: `out/${i}` }));
    // Offered newest first: the card still lists the oldest eight.
    const digest = stateCardDigest(b.items, [...lines].reverse(), 'claude_code');
    expect(digest.files_touched).toEqual(['out/0', 'out/1', 'out/2', 'out/3', 'out/4', 'out/5', 'out/6', 'out/7']);
    expect(digest.concepts).toEqual(['toola', 'toolb', 'toolc', 'toold', 'toole', 'toolf', 'toolg', 'toolh']);
    expect(digest.summary).toBe('gobstopper state card covering 12 elided items');
    expect(digest.goal).toBeNull();
  });

  it('cuts the summary at 117 bytes on a character boundary and keeps the card under 32 KiB', () => {
    expect(cardSummary(`  ${'é'.repeat(100)}  `)).toBe(`${'é'.repeat(58)}...`);
    expect(clipUtf8('aé€😀', 5)).toBe('aé');
    expect(clipUtf8('aé€😀', 9)).toBe('aé€');
    const b = new TranscriptBuilder();
    b.user('😀'.repeat(400));
    const lines: number[] = [];
    for (const word of ['error', 'todo', 'file/', 'plain']) {
      for (let i = 0; i < 8; i++) lines.push(b.toolResult({ label: `L${'😀'.repeat(120)}${i}`, bytes: 4000, summary: `${word} ${'😀'.repeat(500)}` }));
    }
    b.assistant('😀'.repeat(500));
    const digest = stateCardDigest(b.items, lines, 'claude_code');
    expect(digestTextBytes(digest)).toBeLessThanOrEqual(MAX_DIGEST_BYTES);
  });

  it('takes the goal and current work from the live context only, not from before a compaction boundary', () => {
    const b = new TranscriptBuilder();
    b.user('continue', 0);
    b.assistant('Old work, compacted away', 0);
    b.system({ label: 'system', summary: 'compact_boundary' });
    b.user('Fix the flaky upload test');
    b.toolResult({ label: 'Bash', bytes: 4000, summary: 'npm test -> 4000 bytes' });
    expect(cardContext(b.items, 'claude_code')).toMatchObject({ goal: 'Fix the flaky upload test', current_work: null });
    // With no live prompt at all there is no goal rather than a dead one.
    const dead = new TranscriptBuilder();
    dead.user('continue', 0);
    dead.toolResult({ label: 'Bash', bytes: 4000, summary: 'x' });
    expect(cardContext(dead.items, 'claude_code').goal).toBeNull();
  });

  it('keeps choosing when the card would land over the floor, and gives up gracefully when out of candidates', () => {
    const items = codingSession().items;
    const stale = staleCandidates(items, 2);
    const card = cardContext(items, 'claude_code');
    expect(chooseWithDigest(10_610, 5780, stale, card)!.chosen.map((i) => i.line_index)).toEqual([4, 7, 10, 13, 16, 19]);
    const bestEffort = chooseWithDigest(10_610, 100, stale.slice(0, 2), card)!;
    expect(bestEffort.chosen.map((i) => i.line_index)).toEqual([4, 7]);
    expect(bestEffort.after).toBeGreaterThan(100);
    expect(chooseWithDigest(5000, 6000, stale, card)).toBeNull();
  });
});

describe('state card lists over many records', () => {
  it('hold the earliest eight lines of each section, whatever order the records are chosen in', () => {
    const summaries = ['build failed in src/a.ts', 'TODO: wire the flag', 'notes on the plan', 'read src/b.ts', 'permission denied', 'decided to keep it', null];
    const b = new TranscriptBuilder();
    for (let i = 0; i < 300; i++) {
      const summary = summaries[(i * 5 + (i >> 3)) % summaries.length] ?? null;
      if (i % 4 === 3) b.assistant(summary ?? 'carry on');
      else b.toolResult({ label: `Tool${i % 13}(x)`, bytes: 4000, summary });
    }
    const items = b.items;
    // The sections as cardSection sorts them: errors, open tasks, paths and tool results, the rest.
    const section = (text: string, kind: string) =>
      /error|failed|permission denied/.test(text) ? 'errors' : /todo/.test(text) ? 'open_tasks' : text.includes('/') || kind === 'tool_result' ? 'files_touched' : 'decisions';
    let seed = 3;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    for (let round = 0; round < 20; round++) {
      // A random subset in a random order (round 0: every record, oldest first).
      const lines = items.map((i) => i.line_index).filter(() => round === 0 || random(3) > 0);
      if (round > 0) for (let i = lines.length - 1; i > 0; i--) { const j = random(i + 1); [lines[i], lines[j]] = [lines[j]!, lines[i]!]; }
      const digest = stateCardDigest(items, lines, 'claude_code');
      const expected: Record<string, string[]> = { errors: [], open_tasks: [], files_touched: [], decisions: [] };
      for (const line of [...lines].sort((x, y) => x - y)) {
        const item = items[line]!;
        const text = item.summary ?? item.label;
        const list = expected[section(text.toLowerCase(), item.kind)]!;
        if (list.length < 8) list.push(text);
      }
      expect({ errors: digest.errors, open_tasks: digest.open_tasks, files_touched: digest.files_touched, decisions: digest.decisions }, `round ${round}`).toEqual(expected);
      if (round === 0) expect(Object.values(expected).every((list) => list.length === 8)).toBe(true);
    }
  });
});
