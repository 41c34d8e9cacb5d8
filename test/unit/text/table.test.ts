import { describe, expect, it } from 'vitest';
import { cutText, displayWidth, dropInOrder, renderTable, type Column } from '../../../kernel/text/table.js';

const columns: Column[] = [
  { header: 'SHA256' },
  { header: 'BYTES', align: 'right' },
  { header: 'STRATEGY' },
  { header: 'PATH', fit: 'middle' },
];
const path = '/home/dev/.claude/projects/-home-dev-projects-invoices/d06fff4e-8583-4ede-a14c-900fa8daa8a4.jsonl';
const rows = [
  ['461af73a2b190e66', '389 KiB', 'compacted', path],
  ['923756f6d2a0b7ab', '1.2 MiB', 'snapshot', '/tmp/short.jsonl'],
];

describe('renderTable', () => {
  it('prints whole rows when no width is given (a file or a pipe)', () => {
    const lines = renderTable(columns, rows);
    expect(lines[1]).toContain(path);
    expect(lines[0]!.indexOf('BYTES') + 'BYTES'.length).toBe(lines[1]!.indexOf('389 KiB') + '389 KiB'.length);
  });

  it('fits a terminal by cutting paths in the middle, keeping both ends and every number', () => {
    const lines = renderTable(columns, rows, { width: 80 });
    for (const line of lines) expect(displayWidth(line)).toBeLessThanOrEqual(80);
    const cell = lines[1]!.slice(lines[0]!.indexOf('PATH'));
    expect(cell).toContain('…');
    expect(cell.startsWith('/home/dev/')).toBe(true);
    expect(cell.endsWith('8a4.jsonl')).toBe(true);
    expect(lines[1]).toContain('461af73a2b190e66');
    expect(lines[1]).toContain('389 KiB');
    // A cell that already fits is not cut.
    expect(lines[2]).toContain('/tmp/short.jsonl');
  });

  it('never cuts a column below its floor; the terminal wraps what is left', () => {
    const lines = renderTable(columns, rows, { width: 30 });
    const cell = lines[1]!.slice(lines[0]!.indexOf('PATH'));
    expect(displayWidth(cell)).toBe(12);
    expect(lines[1]).toContain('461af73a2b190e66');
  });

  it('shares the narrowing between cuttable columns, widest first', () => {
    const two: Column[] = [{ header: 'A', fit: 'end' }, { header: 'B', fit: 'end' }];
    const lines = renderTable(two, [['x'.repeat(60), 'y'.repeat(20)]], { width: 52 });
    const [a, b] = lines[1]!.split(/ {2}/);
    expect(displayWidth(a!)).toBe(30);
    expect(b).toBe('y'.repeat(20));
  });
});

describe('cutText', () => {
  it('counts code points, not UTF-16 units', () => {
    expect(cutText('ééééé', 5)).toBe('ééééé');
    expect(cutText('😀😀😀😀😀😀', 4)).toBe('😀😀😀…');
    expect(cutText('abcdefghij', 5, 'middle')).toBe('ab…ij');
  });
});

describe('optional columns', () => {
  const cols: Column[] = [{ header: 'ID' }, { header: 'PROVIDER', optional: true }, { header: 'WINDOW', align: 'right', optional: true }, { header: 'PATH', fit: 'middle' }];
  const row = [['abc', 'claude_code', '200,000', path]];

  it('are left out, rightmost first, only when cutting is not enough', () => {
    expect(renderTable(cols, row, { width: 200 })[0]).toMatch(/^ID\s+PROVIDER\s+WINDOW\s+PATH$/);
    expect(renderTable(cols, row, { width: 45 })[0]).toMatch(/^ID\s+PROVIDER\s+WINDOW\s+PATH$/);
    expect(renderTable(cols, row, { width: 35 })[0]).toMatch(/^ID\s+PROVIDER\s+PATH$/);
    const narrow = renderTable(cols, row, { width: 25 });
    expect(narrow[0]).toMatch(/^ID\s+PATH$/);
    expect(narrow[1]!.endsWith('.jsonl')).toBe(true);
  });

  it('are named under the table when left out, and only then', () => {
    expect(renderTable(cols, row, { width: 200 })).toHaveLength(2);
    const at35 = renderTable(cols, row, { width: 35 });
    expect(at35.slice(at35.findIndex((l) => l.startsWith('(not shown'))).map((l) => l.trim()).join(' ')).toBe('(not shown at 35 columns: WINDOW; widen the terminal or use --json)');
    const narrow = renderTable(cols, row, { width: 25, indent: '  ' });
    const note = narrow.slice(narrow.findIndex((l) => l.startsWith('  (not shown')));
    // Wrapped to the width it was asked to fit, like the table above it.
    for (const l of note) expect(l.length).toBeLessThanOrEqual(25);
    expect(note.map((l) => l.trim()).join(' ')).toBe('(not shown at 25 columns: PROVIDER, WINDOW; widen the terminal or use --json)');
  });
});

describe('on a narrow terminal', () => {
  const cols: Column[] = [{ header: 'name' }, { header: 'reduction', short: 'red' }, { header: 'first' }, { header: 'second' }, { header: 'third' }];
  const row = [['elide', '47.1%', 'aaaa', 'bbbb', 'cccc']];

  it('takes the short headers before anything else, and only when the full ones do not fit', () => {
    expect(renderTable(cols, row, { width: 80 })[0]).toBe('name   reduction  first  second  third');
    expect(renderTable(cols, row, { width: 35 })[0]).toBe('name   red    first  second  third');
  });

  it('leaves columns out in the order given, the rightmost first among equals, and keeps those it is told to', () => {
    const ordered = dropInOrder(cols, ['first', 'third', 'second']);
    expect(renderTable(ordered, row, { width: 25 })[0]).toBe('name   red    second');
    expect(renderTable(ordered, row, { width: 19 })[0]).toBe('name   red');
    const keptFirst = dropInOrder(cols, ['first', 'third', 'second'], new Set(['first']));
    expect(renderTable(keptFirst, row, { width: 19 })[0]).toBe('name   red    first');
    const equal: Column[] = cols.map((c, i) => (i >= 2 ? { ...c, optional: true } : c));
    expect(renderTable(equal, row, { width: 25 })[0]).toBe('name   red    first');
  });
});
