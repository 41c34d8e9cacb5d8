/**
 * Plain aligned tables for people: numbers right-aligned, nothing in colour. On a terminal narrower
 * than the table, in this order: headers that have a short form take it (a header is read once, a
 * cell on every row); the columns that say they may be cut (paths, ids, free text) give up width,
 * the widest first, so a row stays one line, while numbers and codes are never cut; and when that is
 * not enough, optional columns are left out in the order they give, the rightmost first among
 * equals (--json always has every field). Widths count code points, which is right for every glyph
 * these tables print (no East Asian wide characters).
 */

import { wrapText } from './wrap.js';

export type Align = 'left' | 'right';

export interface Column {
  header: string;
  /** The header on a terminal too narrow for the table with the full ones. */
  short?: string;
  align?: Align;
  /**
   * How a cell is cut when the table must narrow: at its end (text) or in its middle, keeping
   * more of the end (paths and ids). Columns without it keep their width.
   */
  fit?: 'end' | 'middle';
  /** The narrowest a cut column gets; default 12 (never under its header). */
  minWidth?: number;
  /** Cells longer than this are always cut, whatever the width. */
  maxWidth?: number;
  /**
   * Left out on a terminal too narrow for the table even with every cuttable column cut; a line
   * under the table names what was left out.
   */
  optional?: boolean;
  /** Which optional columns are left out first: the lowest (default 0), the rightmost among equals. */
  dropOrder?: number;
}

export interface TableOptions {
  /** The width to fit in, in columns; undefined never narrows (output to a file or a pipe). */
  width?: number;
  /** Printed before every line. */
  indent?: string;
}

/**
 * Widest a cell holding a message (a failure, an error) gets, on a terminal or not: a whole message
 * would widen every row, so tables that cut one print it in full under themselves.
 */
export const MESSAGE_CELL_MAX = 60;

/** The whole messages a table cut to MESSAGE_CELL_MAX, under a title, each wrapped to the width. */
export function messagesUnderTable(title: string, entries: ReadonlyArray<readonly [label: string, message: string]>, width?: number): string[] {
  if (entries.length === 0) return [];
  return ['', `${title}:`, ...entries.flatMap(([label, message]) => wrapText(`  ${label}: ${message}`, width, '    '))];
}

/**
 * `columns` with those `order` names (by header) made optional, left out first to last in that
 * order; one named in `kept` stays at any width, since it holds what a reader must not miss.
 */
export function dropInOrder(columns: readonly Column[], order: readonly string[], kept: ReadonlySet<string> = new Set()): Column[] {
  return columns.map((column) => {
    const rank = order.indexOf(column.header);
    return rank < 0 || kept.has(column.header) ? column : { ...column, optional: true, dropOrder: rank };
  });
}

const GAP = '  ';
const DEFAULT_MIN_WIDTH = 12;
const ELLIPSIS = '…';

export const displayWidth = (text: string): number => {
  let n = 0;
  for (const _ of text) n += 1;
  return n;
};

/** `text` in at most `max` code points, an ellipsis marking what was cut. */
export function cutText(text: string, max: number | undefined, where: 'end' | 'middle' = 'end'): string {
  if (max === undefined || displayWidth(text) <= max) return text;
  if (max <= 1) return ELLIPSIS.slice(0, max);
  const points = Array.from(text);
  if (where === 'end') return points.slice(0, max - 1).join('') + ELLIPSIS;
  // The end of a path or id tells it apart more often than its start (file names, id suffixes).
  const head = Math.ceil((max - 1) / 3);
  const tail = max - 1 - head;
  return points.slice(0, head).join('') + ELLIPSIS + points.slice(points.length - tail).join('');
}

export function renderTable(columns: readonly Column[], rows: readonly (readonly string[])[], options: TableOptions = {}): string[] {
  const indent = options.indent ?? '';
  const capped = rows.map((row) => columns.map((c, i) => cutText(row[i] ?? '', c.maxWidth, c.fit)));
  const naturalUnder = (headers: readonly string[]) => columns.map((_, i) => Math.max(displayWidth(headers[i]!), ...capped.map((row) => displayWidth(row[i]!))));
  const room = options.width === undefined ? undefined : options.width - displayWidth(indent);
  const fullHeaders = columns.map((c) => c.header);
  const full = naturalUnder(fullHeaders);
  const abbreviate = room !== undefined && lineWidth(full) > room;
  const headers = abbreviate ? columns.map((c) => c.short ?? c.header) : fullHeaders;
  const natural = abbreviate ? naturalUnder(headers) : full;
  const shown = shownColumns(columns, headers, natural, room);
  const budget = room === undefined ? undefined : room - GAP.length * (shown.length - 1);
  const widths = fitWidths(
    shown.map((i) => columns[i]!),
    shown.map((i) => headers[i]!),
    shown.map((i) => natural[i]!),
    budget,
  );
  const line = (cells: readonly string[]) =>
    indent +
    shown
      .map((i, k) => {
        const column = columns[i]!;
        const text = cutText(cells[i]!, widths[k], column.fit);
        const pad = ' '.repeat(Math.max(0, widths[k]! - displayWidth(text)));
        return column.align === 'right' ? pad + text : text + pad;
      })
      .join(GAP)
      .trimEnd();
  const lines = [line(headers), ...capped.map(line)];
  // A column that silently vanished would read as a table without that measure.
  const left = columns.filter((_, i) => !shown.includes(i)).map((c) => c.header.trim() || '(unnamed)');
  if (left.length > 0) {
    const note = `(not shown at ${options.width} columns: ${left.join(', ')}; widen the terminal or use --json)`;
    lines.push(...wrapText(note, options.width === undefined ? undefined : options.width - displayWidth(indent), ' ').map((l) => indent + l));
  }
  return lines;
}

const lineWidth = (widths: readonly number[]): number => widths.reduce((a, b) => a + b, 0) + GAP.length * (widths.length - 1);

/** The indexes of the columns printed: optional ones are dropped, in their drop order, until the narrowest table fits. */
function shownColumns(columns: readonly Column[], headers: readonly string[], natural: readonly number[], width: number | undefined): number[] {
  const shown = columns.map((_, i) => i);
  if (width === undefined) return shown;
  const narrowest = () => lineWidth(shown.map((i) => floorWidth(columns[i]!, headers[i]!, natural[i]!)));
  const droppable = shown.filter((i) => columns[i]!.optional).sort((a, b) => (columns[a]!.dropOrder ?? 0) - (columns[b]!.dropOrder ?? 0) || b - a);
  for (const i of droppable) {
    if (narrowest() <= width) break;
    shown.splice(shown.indexOf(i), 1);
  }
  return shown;
}

/** The narrowest a column is printed: its natural width, or for a cuttable one its floor. */
function floorWidth(column: Column, header: string, natural: number): number {
  return column.fit ? Math.min(natural, Math.max(column.minWidth ?? DEFAULT_MIN_WIDTH, displayWidth(header))) : natural;
}

/**
 * Column widths within `budget`: every cuttable column is capped at one common width (but not under
 * its floor), the largest cap that fits. When even the floors do not fit, the floors are used and
 * the terminal wraps what is left.
 */
function fitWidths(columns: readonly Column[], headers: readonly string[], natural: readonly number[], budget: number | undefined): number[] {
  const total = natural.reduce((a, b) => a + b, 0);
  if (budget === undefined || total <= budget) return [...natural];
  const floors = columns.map((c, i) => floorWidth(c, headers[i]!, natural[i]!));
  const widthsAt = (cap: number) => natural.map((n, i) => (columns[i]!.fit ? Math.min(n, Math.max(cap, floors[i]!)) : n));
  const sumAt = (cap: number) => widthsAt(cap).reduce((a, b) => a + b, 0);
  let lo = 0;
  let hi = Math.max(...natural);
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (sumAt(mid) <= budget) lo = mid;
    else hi = mid - 1;
  }
  return widthsAt(lo);
}
