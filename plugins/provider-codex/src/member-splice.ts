/**
 * Writing back a record the render changed (an elided output, a fork's session id) with only the
 * changed members encoded again: every other byte stays as the client wrote it. Encoding the whole
 * record would round numbers past 2^53 to the nearest double, rewrite escapes (`\/`, `\u00e9`) and
 * overflow the stack on deeply nested values the client wrote and reads back without trouble.
 *
 * The changed members are found in the line's bytes by their paths, in one walk of each object and
 * array on the way; the new line is then parsed and each path must read back the new value. An
 * object on the way with a key written twice, or with a key spelled with escapes (another spelling
 * of a changed key, perhaps), is not followed: a reader taking the first of two would see the old
 * value. Then the whole record is encoded instead, as it always was, and the client reads exactly
 * the record the render meant.
 */
import { RawJsonError, forEachRawElement, forEachRawMember, rawHasEscape, rawKeyIs, skipRawSpace, type ByteSpan } from '../../../sdk/raw-json.js';
import type { Json, JsonObject } from './records.js';

export type MemberPath = readonly (string | number)[];

/** One member the render changed, and its new value. */
export interface MemberChange {
  path: MemberPath;
  value: Json;
}

/** The changes' paths as a tree, so that each object and array of the line is walked once. */
interface PathNode {
  /** The change whose value this node is, if it is one. */
  change: number | null;
  keys: Map<string, PathNode>;
  indexes: Map<number, PathNode>;
}

const newNode = (): PathNode => ({ change: null, keys: new Map(), indexes: new Map() });

function pathTree(changes: readonly MemberChange[]): PathNode {
  const root = newNode();
  changes.forEach((change, index) => {
    let node = root;
    for (const step of change.path) {
      const children: Map<string | number, PathNode> = typeof step === 'string' ? node.keys : node.indexes;
      let child = children.get(step);
      if (!child) children.set(step, (child = newNode()));
      node = child;
    }
    node.change = index;
  });
  return root;
}

/**
 * Fills `spans[k]` with the span of change k's value inside `span`; false when the bytes cannot
 * be followed, when a key on the way is written twice (a reader taking the first would see the
 * old value), or when one changed member holds another.
 */
function locate(line: Buffer, span: ByteSpan, node: PathNode, spans: ByteSpan[]): boolean {
  if (node.change !== null) {
    spans[node.change] = span;
    return node.keys.size === 0 && node.indexes.size === 0;
  }
  const found = new Map<PathNode, ByteSpan>();
  if (node.keys.size > 0) {
    let twice = false;
    let escaped = false;
    forEachRawMember(line, span.start, span.end, (keyStart, keyEnd, value) => {
      // A key spelled with escapes may be another spelling of a changed one, before or after it.
      if (rawHasEscape(line, keyStart, keyEnd)) escaped = true;
      for (const [key, child] of node.keys) {
        if (!rawKeyIs(line, keyStart, keyEnd, key)) continue;
        if (found.has(child)) twice = true;
        found.set(child, value);
      }
      return !twice && !escaped;
    });
    if (twice || escaped || found.size !== node.keys.size) return false;
  }
  if (node.indexes.size > 0) {
    forEachRawElement(line, span.start, span.end, (element, index) => {
      const child = node.indexes.get(index);
      if (child) found.set(child, element);
    });
    if (found.size !== node.keys.size + node.indexes.size) return false;
  }
  for (const [child, childSpan] of found) if (!locate(line, childSpan, child, spans)) return false;
  return true;
}

/** Each change's span in the line, in the order of `changes`; null when they cannot be found. */
function spansOf(line: Buffer, changes: readonly MemberChange[]): ByteSpan[] | null {
  const spans: ByteSpan[] = [];
  try {
    if (!locate(line, { start: skipRawSpace(line, 0, line.length), end: line.length }, pathTree(changes), spans)) return null;
  } catch (error) {
    if (error instanceof RawJsonError) return null;
    throw error;
  }
  // A path listed twice leaves one of its changes without a span.
  for (let k = 0; k < changes.length; k += 1) if (spans[k] === undefined) return null;
  return spans;
}

function valueAt(record: unknown, path: MemberPath): unknown {
  let at = record;
  for (const step of path) {
    if (at === null || typeof at !== 'object') return undefined;
    at = (at as Record<string | number, unknown>)[step];
  }
  return at;
}

/**
 * The line with each change's value written over the member's bytes, or null when a member cannot
 * be found or the result does not read back as the changes say.
 */
function spliced(line: Buffer, changes: readonly MemberChange[]): Buffer | null {
  const spans = spansOf(line, changes);
  if (spans === null) return null;
  const located = changes.map((change, k) => ({ span: spans[k]!, text: Buffer.from(JSON.stringify(change.value), 'utf8') }));
  located.sort((a, b) => a.span.start - b.span.start);
  const parts: Buffer[] = [];
  let at = 0;
  for (const { span, text } of located) {
    if (span.start < at) return null; // overlapping paths: not a change this render makes
    parts.push(line.subarray(at, span.start), text);
    at = span.end;
  }
  parts.push(line.subarray(at));
  const out = Buffer.concat(parts);
  let reread: unknown;
  try {
    reread = JSON.parse(out.toString('utf8'));
  } catch {
    return null;
  }
  for (const change of changes) {
    if (JSON.stringify(valueAt(reread, change.path)) !== JSON.stringify(change.value)) return null;
  }
  return out;
}

/**
 * The bytes of `record` (parsed from `line`, then changed as `changes` list) to write in place of
 * `line`. `cr`: the line ends in a carriage return, which a whole re-encoding must keep.
 */
export function rewrittenLine(line: Buffer, record: JsonObject, changes: readonly MemberChange[], cr: boolean): Buffer {
  if (changes.length > 0) {
    const out = spliced(line, changes);
    if (out !== null) return out;
  }
  return Buffer.from(JSON.stringify(record) + (cr ? '\r' : ''), 'utf8');
}
