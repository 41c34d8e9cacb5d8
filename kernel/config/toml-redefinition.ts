/**
 * smol-toml says only "trying to redefine an already defined table or value" and where. With two
 * `[policy]` headers far apart, or the same key in two places of a long table, the line number alone
 * leaves the reader to work out which table it is in; this names the table and key, as every other
 * config error does.
 */
import { parse as parseToml } from 'smol-toml';
import { MAX_NESTING } from './plain-data.js';
import { tableName, type ConfigPlace } from './schema-messages.js';

const PART = String.raw`(?:[A-Za-z0-9_-]+|"(?:[^"\\]|\\.)*"|'[^']*')`;
const KEY = new RegExp(String.raw`^${PART}(?:[ \t]*\.[ \t]*${PART})*`);
const HEADER = new RegExp(String.raw`^[ \t]*\[\[?[ \t]*(${PART}(?:[ \t]*\.[ \t]*${PART})*)[ \t]*\]`);

/** A key the probe adds; no config could hold a NUL in a key it means. */
const PROBE = '\u0000gobstopper-probe';

export interface Redefinition {
  /** "'adaptive' in [policy]" or "table [policy]". */
  what: string;
  place: ConfigPlace;
}

/** What the redefinition smol-toml reported at `line`:`column` (both from 1) redefines; null when it cannot tell. */
export function describeRedefinition(text: string, line: number, column: number): Redefinition | null {
  const lines = text.split(/\r?\n/);
  const source = lines[line - 1];
  if (source === undefined) return null;
  const header = HEADER.exec(source);
  if (header && column - 1 <= header[0].length) {
    const segments = keySegments(header[1]!);
    if (segments === null) return null;
    return { what: `table ${tableName(segments)}`, place: { table: tableName(segments), key: null } };
  }
  const written = KEY.exec(source.slice(column - 1));
  const parts = written ? keySegments(written[0]) : null;
  if (parts === null) return null;
  const key = parts.join('.');
  // Inside an inline table the key's table is the value being written, not the header above it.
  if (source.slice(0, column - 1).trim() !== '') return { what: `'${key}' in an inline table`, place: { table: null, key } };
  const table = enclosingTable(lines.slice(0, line - 1).join('\n'));
  if (table === null) return { what: `'${key}'`, place: { table: null, key } };
  if (table.length === 0) return { what: `'${key}' at the top level`, place: { table: null, key } };
  return { what: `'${key}' in ${tableName(table)}`, place: { table: tableName(table), key } };
}

/** A dotted key's parts, unquoted, as TOML reads them; null if it does not read as one. */
function keySegments(written: string): string[] | null {
  try {
    const parsed = parseToml(`${written} = 0`);
    const segments: string[] = [];
    let node: unknown = parsed;
    while (node !== null && typeof node === 'object') {
      const [name] = Object.keys(node);
      if (name === undefined) return null;
      segments.push(name);
      node = (node as Record<string, unknown>)[name];
    }
    return segments;
  } catch {
    return null;
  }
}

/** The table the next key line after `prefix` lands in, found by parsing the prefix with a probe key after it. */
function enclosingTable(prefix: string): string[] | null {
  let parsed: unknown;
  try {
    parsed = parseToml(`${prefix}\n"${PROBE.replace('\u0000', '\\u0000')}" = 0\n`);
  } catch {
    return null;
  }
  return findProbe(parsed, []);
}

function findProbe(node: unknown, path: string[]): string[] | null {
  // Headers may nest past what the stack holds; a file that deep is refused for its depth anyway.
  if (path.length > MAX_NESTING) return null;
  if (Array.isArray(node)) return node.length === 0 ? null : findProbe(node[node.length - 1], path);
  if (node === null || typeof node !== 'object' || node instanceof Date) return null;
  if (Object.hasOwn(node, PROBE)) return path;
  for (const [key, value] of Object.entries(node)) {
    const found = findProbe(value, [...path, key]);
    if (found) return found;
  }
  return null;
}
