import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sharedBuffer, streamingSha256 } from '../../../kernel/vault/sha256-stream.js';

describe('streamingSha256', () => {
  it.each([
    ['in this thread', Number.MAX_SAFE_INTEGER],
    ['on a hashing thread', 0],
  ])('equals a plain sha256 %s, for shared and ordinary buffers', async (_label, parallelFrom) => {
    const parts = [randomBytes(1000), randomBytes(1 << 20), Buffer.alloc(0), randomBytes(12345)];
    const hash = streamingSha256(1, parallelFrom);
    try {
      for (const [i, part] of parts.entries()) {
        let chunk: Buffer = part;
        if (i % 2 === 1) {
          // A view into the middle of a shared buffer.
          const shared = sharedBuffer(part.length + 10);
          part.copy(shared, 5);
          chunk = shared.subarray(5, 5 + part.length);
        }
        await hash.update(chunk);
      }
      expect(await hash.digest()).toBe(createHash('sha256').update(Buffer.concat(parts)).digest('hex'));
    } finally {
      await hash.close();
      await hash.close();
    }
  });

  it('reports a stopped hashing thread instead of hanging', async () => {
    const hash = streamingSha256(1, 0);
    await hash.close();
    await expect(hash.update(sharedBuffer(4))).rejects.toThrow(/stopped/);
  });
});
