import { describe, expect, it } from 'vitest';
import { StderrRing } from '../../../kernel/plugins/process/stderr-ring.js';

describe('StderrRing', () => {
  it('keeps only the newest bytes, in order, across wrap-arounds', () => {
    const ring = new StderrRing(10);
    ring.push(Buffer.from('abcdef'));
    ring.push(Buffer.from('ghijkl'));
    expect(ring.contents().toString()).toBe('cdefghijkl');
    ring.push(Buffer.from('mn'));
    expect(ring.contents().toString()).toBe('efghijklmn');
    ring.push(Buffer.from('0123456789XYZ'));
    expect(ring.contents().toString()).toBe('3456789XYZ');
    expect(ring.totalBytes).toBe(27);
  });

  it('gives a one-line tail of the last lines without control characters', () => {
    const ring = new StderrRing(1024);
    ring.push(Buffer.from('first\nsecond\n\nthird\x1b[31m red\nfourth\n'));
    expect(ring.tail(3)).toBe('second | third [31m red | fourth');
    const long = new StderrRing(4096);
    long.push(Buffer.from('x'.repeat(1000)));
    expect(long.tail(3, 50)).toHaveLength(50);
  });

  it("leads with the line naming a crash's error, not Node's stack frames and version banner", () => {
    const ring = new StderrRing(4096);
    ring.push(
      Buffer.from(
        [
          'node:internal/modules/esm/resolve:854',
          '  throw new ERR_MODULE_NOT_FOUND(packageName, fileURLToPath(base), null);',
          '        ^',
          '',
          "Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'gobstopper' imported from /b/main.mjs",
          '    at packageResolve (node:internal/modules/esm/resolve:854:9)',
          '    at moduleResolve (node:internal/modules/esm/resolve:927:18)',
          '{',
          "  code: 'ERR_MODULE_NOT_FOUND'",
          '}',
          '',
          'Node.js v20.20.2',
          '',
        ].join('\n'),
      ),
    );
    expect(ring.tail()).toBe(
      "throw new ERR_MODULE_NOT_FOUND(packageName, fileURLToPath(base), null); | Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'gobstopper' imported from /b/main.mjs | code: 'ERR_MODULE_NOT_FOUND'",
    );
    // An error line followed by more output than the tail keeps still leads.
    const chatty = new StderrRing(4096);
    chatty.push(Buffer.from('TypeError: x is not a function\ncleanup 1\ncleanup 2\ncleanup 3\n'));
    expect(chatty.tail()).toBe('TypeError: x is not a function | cleanup 2 | cleanup 3');
    expect(chatty.tail(3, 20)).toBe('TypeError: x is not…');
    // A long line after the error line does not push it out of the cut: the lines before it go first.
    const dump = new StderrRing(1 << 20);
    dump.push(Buffer.from(`Traceback:\nValueError: bad input\n${'z'.repeat(100_000)}\n`));
    expect(dump.tail()).toBe(`ValueError: bad input | ${'z'.repeat(400 - 'ValueError: bad input | '.length - 1)}…`);
    // A plugin's own sentence that starts with "at" is kept; frames of every shape are not.
    const own = new StderrRing(4096);
    own.push(Buffer.from('at least one tool output must stay\n    at async Promise.all (index 0)\n    at /b/main.mjs:3:9\n    at new Foo (<anonymous>)\n'));
    expect(own.tail()).toBe('at least one tool output must stay');
  });

  it('keeps nothing with capacity 0', () => {
    const ring = new StderrRing(0);
    ring.push(Buffer.from('ignored'));
    expect(ring.contents().length).toBe(0);
    expect(ring.tail()).toBe('');
  });
});
