import { describe, expect, it } from 'vitest';
import type { TranscriptItem } from '../../../schemas/generated/types.js';
import { olderDuplicates, proposeDedupe } from '../../../plugins/strategies-core/src/dedupe.js';
import { staleCandidates } from '../../../sdk/strategy/candidates.js';
import { proposeParams } from '../../fixtures/transcripts/params.js';
import { duplicateSession } from '../../fixtures/transcripts/sessions.js';

const policy = { trigger_tokens: 5000, floor_tokens: 0, keep_recent_tool_outputs: 2 };

describe('dedupe', () => {
  it('elides older exact duplicates by label and payload sha256, keeping the newest copy', () => {
    // Read(config.ts) at 4, 10, 16 keeps 16; Bash(npm test) at 7, 22 keeps 22; the same hash under
    // Cat(config.ts) is another group; Bash(ls) has no hash and is never a duplicate.
    const result = proposeDedupe(proposeParams(duplicateSession().items, { policy }));
    expect(result.edits[0]).toMatchObject({ op: 'elide', line_indexes: [4, 7, 10] });
    expect(result.edits[1]).toMatchObject({
      digest: { goal: 'tidy the config loader', files_touched: ['config.ts', 'npm test', 'config.ts'], current_work: 'done', covers_items: 3 },
    });
    expect(result.context_tokens_after).toBe(9564 - 3 * 976 + 42);
    expect(result.rationale).toBe('context 9564 tokens exceeds trigger 5000; deduping 3 stale tool outputs');
  });

  it('stops at the floor like the other card strategies', () => {
    const result = proposeDedupe(proposeParams(duplicateSession().items, { policy: { ...policy, floor_tokens: 8500 } }));
    expect(result.edits[0]).toMatchObject({ line_indexes: [4, 7] });
  });

  it('groups only stale candidates', () => {
    const items = duplicateSession().items;
    expect(olderDuplicates(staleCandidates(items, 5)).map((i) => i.line_index)).toEqual([4]);
  });

  it('returns no plan below the trigger or without duplicates', () => {
    expect(proposeDedupe(proposeParams(duplicateSession().items, { policy: { ...policy, trigger_tokens: 9565 } })).edits).toEqual([]);
    const none = proposeDedupe(proposeParams(duplicateSession().items, { policy: { ...policy, keep_recent_tool_outputs: 7 } }));
    expect(none.rationale).toBe('no older duplicate tool outputs outside the 7 protected recent ones');
  });

  it('finds exactly the members older than the newest of their group, whatever the labels, hashes and lines', () => {
    // The rule written plainly: a member is older when the last member of its group in candidate
    // order lies on another line.
    const reference = (candidates: readonly TranscriptItem[]) => {
      const key = (item: TranscriptItem) => JSON.stringify([item.label, item.payload_sha256]);
      const last = new Map<string, number>();
      for (const item of candidates) if (item.payload_sha256) last.set(key(item), item.line_index);
      return candidates.filter((item) => item.payload_sha256 && last.get(key(item)) !== item.line_index);
    };
    let seed = 7;
    const next = (n: number) => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed % n;
    };
    // Labels that a joined key could confuse; a few hashes; lines that several items share.
    const labels = ['Read(a)', 'Read(a)|x', 'Read', '(a)|x', 'Bash(ls)'];
    const hashes = [null, 'a'.repeat(64), 'b'.repeat(64), 'c'.repeat(64)];
    const base = duplicateSession().items[0]!;
    for (let round = 0; round < 300; round += 1) {
      let line = 0;
      const items: TranscriptItem[] = Array.from({ length: 1 + next(40) }, () => {
        line += next(3) === 0 ? 0 : 1 + next(2);
        return { ...base, line_index: line, label: labels[next(labels.length)]!, payload_sha256: hashes[next(hashes.length)]! };
      });
      expect(olderDuplicates(items), `round ${round}`).toEqual(reference(items));
    }
  });
});
