import { describe, expect, it } from 'vitest';
import { withScratch } from '../../../kernel/vault/scratch.js';
import { CHUNK_BYTES } from '../../../kernel/vault/limits.js';

describe('read-back scratch buffers', () => {
  it('never hands one buffer to two compares in flight, and reuses them once they are done', async () => {
    const held: ArrayBufferLike[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const uses = Array.from({ length: 6 }, () =>
      withScratch(CHUNK_BYTES + 1, async (buffer) => {
        expect(buffer.length).toBe(CHUNK_BYTES + 1);
        held.push(buffer.buffer);
        buffer.fill(held.length);
        await gate;
        return buffer[0];
      }),
    );
    await Promise.resolve();
    release();
    const marks = await Promise.all(uses);
    // Each use still saw its own fill after the others wrote theirs: no buffer was shared.
    expect(marks).toEqual([1, 2, 3, 4, 5, 6]);
    expect(new Set(held).size).toBe(6);

    const later = await withScratch(CHUNK_BYTES, async (buffer) => buffer.buffer);
    expect(held).toContain(later);
  });
});
