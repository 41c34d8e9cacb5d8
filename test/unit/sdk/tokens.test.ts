import { describe, expect, it } from 'vitest';
import { elisionSavings } from '../../../sdk/tokens.js';
import { elidableTokens } from '../../../kernel/policy/context.js';
import type { TranscriptItem } from '../../../schemas/generated/types.js';

const output = (est_tokens: number, elidable_bytes: number, elidable_parts = 1): TranscriptItem => ({ line_index: 0, kind: 'tool_result', est_tokens, label: 'Bash', elidable_bytes, elidable_parts });

describe('what eliding an output reclaims', () => {
  it('is the payload less the stub it leaves (96 bytes a part), never below 0', () => {
    expect(elisionSavings(output(1_100, 4_000))).toBe(1_000 - 24);
    expect(elisionSavings(output(1_100, 4_000, 2))).toBe(1_000 - 48);
    expect(elisionSavings(output(30, 80))).toBe(0);
  });

  it('for a payload the client sends cut short, is what the record costs less its stub', () => {
    // Codex sends a 200,000-byte output as ~12,000 tokens: eliding it reclaims those, not 50,000.
    expect(elisionSavings(output(12_030, 200_000))).toBe(12_030 - 24);
    expect(elidableTokens([output(12_030, 200_000), output(1_100, 4_000)])).toBe(12_030 + 1_000);
  });
});
