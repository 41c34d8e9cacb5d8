/** The hex sha256 of bytes in memory; files are hashed streaming (vault/sha256-stream.ts). */
import { createHash } from 'node:crypto';

export function sha256Hex(data: Buffer | string): string {
  return createHash('sha256').update(data).digest('hex');
}
