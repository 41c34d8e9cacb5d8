import { createHash } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { StagingWriter } from '../../../sdk/staging.js';

const dir = mkdtempSync(join(tmpdir(), 'sdk-staging-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
function staging(): string {
  const path = join(dir, `s${n++}.jsonl`);
  closeSync(openSync(path, 'wx', 0o600));
  return path;
}

describe('StagingWriter', () => {
  /** Writes 1 MiB records into a file whose writes fail past `room` bytes with `code`; returns the writer's error. */
  function writePast(path: string, room: number, code: string, text: string): unknown {
    const limited = ((fd: number, buffer: Buffer, offset: number, length: number, position: number) => {
      if (position + length > room) throw Object.assign(new Error(`${code}: ${text}, write`), { code });
      return writeSync(fd, buffer, offset, length, position);
    }) as typeof writeSync;
    const writer = new StagingWriter(path, limited);
    try {
      for (let i = 0; i < 8; i++) writer.writeRecord(Buffer.alloc(1024 * 1024, 0x61));
      writer.finish();
      return undefined;
    } catch (error) {
      return error;
    } finally {
      writer.abort();
    }
  }

  it('answers a full disk with an error that names the file and says to free space', () => {
    const path = staging();
    expect(writePast(path, 3 * 1024 * 1024, 'ENOSPC', 'no space left on device')).toMatchObject({
      code: -32603,
      message: `cannot write the candidate into ${path}: the disk is full (ENOSPC); free space there and run the command again`,
    });
  });

  it('says what a file-size limit (ulimit -f) stopping the candidate means and what to do', () => {
    const path = staging();
    expect(writePast(path, 2 * 1024 * 1024, 'EFBIG', 'file too large')).toMatchObject({
      code: -32603,
      message: `cannot write the candidate into ${path}: the file would grow past the largest file this process may write (ulimit -f) or the file system holds (EFBIG); raise that limit and run the command again`,
    });
  });

  it('writes records of every size, whole or in parts, exactly and in order, and says what it wrote', () => {
    const path = staging();
    const writer = new StagingWriter(path);
    const expected: Buffer[] = [];
    const sizes = [0, 1, 100, 1024 * 1024 - 1, 1024 * 1024, 3 * 1024 * 1024 + 7, 5, 2 * 1024 * 1024];
    sizes.forEach((size, i) => {
      const record = Buffer.alloc(size, 0x61 + (i % 26));
      if (i % 2 === 0) writer.writeRecord(record, true);
      else writer.writeRecordParts([record.subarray(0, size >> 1), record.subarray(size >> 1)], true);
      expected.push(record, Buffer.from('\n'));
    });
    writer.writeRecord('{"é":1}', false);
    expected.push(Buffer.from('{"é":1}'));
    const done = writer.finish();
    const bytes = readFileSync(path);
    expect(bytes.equals(Buffer.concat(expected))).toBe(true);
    expect(done).toEqual({ bytes: bytes.length, output_sha256: createHash('sha256').update(bytes).digest('hex'), record_count: sizes.length + 1 });
  });

  it('leaves what it had not flushed unwritten when aborted', () => {
    const path = staging();
    const writer = new StagingWriter(path);
    writer.writeRecord('{"a":1}');
    writer.abort();
    expect(readFileSync(path, 'utf8')).toBe('');
  });
});
