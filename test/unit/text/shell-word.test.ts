import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { terminalSafe } from '../../../kernel/text/human.js';
import { shellWord } from '../../../kernel/text/shell-word.js';

/** What bash makes of a printed word (in the C locale: the escapes are bytes, read back in any). */
const readBack = (word: string) => execFileSync('bash', ['-c', `printf %s ${word}`], { encoding: 'utf8', env: { ...process.env, LC_ALL: 'C' } });

describe('shellWord', () => {
  it('leaves a plain path bare and single-quotes one with spaces or quotes', () => {
    expect(shellWord('/home/dev/a-b_c.jsonl')).toBe('/home/dev/a-b_c.jsonl');
    expect(shellWord("/tmp/my project/it's")).toBe(`'/tmp/my project/it'\\''s'`);
    expect(readBack(shellWord("/tmp/my project/it's"))).toBe("/tmp/my project/it's");
  });

  it.each([
    ['an escape sequence', '/tmp/\u001b[31mred'],
    ['a newline', '/tmp/two\nlines'],
    ['a tab and a backslash', '/tmp/a\tb\\c'],
    ['a quote next to a control', "/tmp/it's\u0007"],
    ['a C1 control', '/tmp/csi\u009b2J'],
    ['a bidi override', '/tmp/\u202egnp.exe'],
    ['a line separator', '/tmp/a\u2028b'],
  ])('writes a word with %s so that the terminal shows no control and bash reads the same word back', (_what, word) => {
    const printed = shellWord(word);
    expect(printed.startsWith("$'")).toBe(true);
    expect(terminalSafe(printed)).toBe(printed);
    expect(printed).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
    expect(readBack(printed)).toBe(word);
  });
});
