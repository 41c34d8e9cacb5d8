/**
 * Prose for people, wrapped at word boundaries to the width tables fit (a terminal, or COLUMNS);
 * undefined leaves it one line, as output to a file or a pipe is. Continuation lines take `hang`
 * in front so a wrapped note still reads as one. A run of spaces between two words on one line is
 * kept as it is, so a line laid out in columns keeps them; at a break it goes.
 */
import { displayWidth } from './table.js';

export function wrapText(text: string, width: number | undefined, hang = '  '): string[] {
  if (width === undefined || displayWidth(text) <= width) return [text];
  const lead = /^\s*/.exec(text)![0];
  const lines: string[] = [];
  let line = lead;
  let empty = true;
  for (const [, gap, word] of text.slice(lead.length).matchAll(/( *)([^ ]+)/g)) {
    const candidate = empty ? line + word : line + gap + word;
    if (!empty && displayWidth(candidate) > width) {
      lines.push(line);
      line = lead + hang + word;
    } else {
      line = candidate;
    }
    empty = false;
  }
  lines.push(line);
  return lines;
}
