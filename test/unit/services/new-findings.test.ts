import { describe, expect, it } from 'vitest';
import type { Finding } from '../../../schemas/generated/types.js';
import { newFindings } from '../../../kernel/services/findings.js';

const f = (severity: Finding['severity'], code: string, line_index: number): Finding => ({ severity, code, message: `${code} at ${line_index}`, line_index });

describe('findings a rewrite adds', () => {
  it('are counted by severity and code, not by line (appended records move lines)', () => {
    expect(newFindings([f('error', 'orphan', 3)], [f('error', 'orphan', 9)])).toEqual([]);
    expect(newFindings([f('error', 'orphan', 3)], [f('error', 'orphan', 3), f('error', 'orphan', 9)])).toEqual([f('error', 'orphan', 9)]);
    expect(newFindings([], [f('info', 'note', 1)])).toEqual([]);
  });

  it('a problem made milder is not added: a warning may stand for an error of the same code', () => {
    // A Codex record missing its ordinal is an error as the final record; the card after it makes it a warning.
    expect(newFindings([f('error', 'missing_ordinal', 60)], [f('warning', 'missing_ordinal', 60)])).toEqual([]);
    // Not the other way round, and one error covers one warning only.
    expect(newFindings([f('warning', 'blank_line', 2)], [f('error', 'blank_line', 2)])).toEqual([f('error', 'blank_line', 2)]);
    expect(newFindings([f('error', 'x', 1)], [f('warning', 'x', 1), f('warning', 'x', 2)])).toEqual([f('warning', 'x', 2)]);
    // An error still present uses the source's error first; a new warning of the code is then new.
    expect(newFindings([f('error', 'x', 1)], [f('warning', 'x', 5), f('error', 'x', 1)])).toEqual([f('warning', 'x', 5)]);
  });
});
