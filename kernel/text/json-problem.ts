/**
 * A JSON.parse message, on one line, with its position turned into a line and column, which an
 * editor shows. `text` is the string that was parsed: the parser counts UTF-16 units of it.
 */
export function jsonProblemAt(text: string, message: string): string {
  const firstLine = message.split('\n')[0]!.slice(0, 200);
  const at = /at position (\d+)/.exec(firstLine);
  if (!at) return firstLine;
  const before = text.slice(0, Number(at[1]));
  const line = before.split('\n').length;
  const column = before.length - before.lastIndexOf('\n');
  return `${firstLine.replace(/\s*in JSON at position \d+.*$/, '')} at line ${line}, column ${column}`;
}
