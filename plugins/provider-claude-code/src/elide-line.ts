/**
 * The edits render makes inside one record's text. Each replaces exactly the characters of one JSON
 * value, so every other byte of the line (key order, spacing, escapes) stays as the client wrote it.
 */
import { forEachRawMember, rawHasEscape, rawKeyIs, rawMemberSpan, RawJsonError, skipRawSpace, type ByteSpan } from '../../../sdk/raw-json.js';
import { findValueSpan, replaceSpans, stringValueSpans, topLevelMembers, topLevelValueSpans, type Replacement, type Span } from './json-span.js';
import { partRewrites, stubText, type PartShape } from './payload.js';
import { isObject, type RawRecord } from './records.js';
import type { ElideTarget } from './render-plan.js';

/** Parses a line; null when it does not parse to an object. */
export function parseLine(text: string): RawRecord | null {
  try {
    const value: unknown = JSON.parse(text);
    return isObject(value) ? value : null;
  } catch {
    return null;
  }
}

/**
 * The `toolUseResult` UI copy of an elided result: every string in it longer than the stub becomes
 * the stub. The client never sends this copy to the model, but it holds the same output (stdout,
 * file content, the edited file), so leaving it would keep the elided text in the fork and most of
 * the bytes. Keys, numbers, booleans and short strings (types, statuses, most paths) stay as they
 * were, so the client's transcript view still finds the shape it renders.
 */
function uiCopyReplacements(text: string, copies: readonly Span[], stubJson: string): Replacement[] {
  const out: Replacement[] = [];
  for (const copy of copies) {
    for (const span of stringValueSpans(text, copy)) if (span.end - span.start > stubJson.length) out.push({ span, text: stubJson });
  }
  return out;
}

function utf8Bytes(text: string, span: Span): number {
  return Buffer.byteLength(text.slice(span.start, span.end), 'utf8');
}

/**
 * The replacements that elide one line's payload and its UI copy, or none when the stubs would not
 * make the line smaller. `parts` are the line's eligible payload parts (payload.ts).
 */
function elision(text: string, members: ReadonlyArray<{ key: string; span: Span }>, parts: readonly PartShape[], target: ElideTarget): Replacement[] {
  let message: Span | null = null;
  const copies: Span[] = [];
  for (const m of members) {
    if (m.key === 'message') message = m.span;
    else if (m.key === 'toolUseResult') copies.push(m.span);
  }
  if (message === null) return [];
  const out: Replacement[] = [];
  let firstStub: string | null = null;
  for (const part of parts) {
    const stub = target.stub ?? stubText(target.template, part.bytes);
    for (const rewrite of partRewrites(part, stub)) {
      // Paths start at the record; the walk starts at its message.
      const span = findValueSpan(text, rewrite.path.slice(1), message);
      // The text parsed, so a missing span means a shape this locator does not follow: leave the line whole.
      if (!span) return [];
      out.push({ span, text: JSON.stringify(rewrite.value) });
      firstStub ??= stub;
    }
  }
  if (firstStub === null) return [];
  out.push(...uiCopyReplacements(text, copies, JSON.stringify(firstStub)));
  let saved = 0;
  for (const r of out) saved += utf8Bytes(text, r.span) - Buffer.byteLength(r.text, 'utf8');
  return saved > 0 ? out : [];
}

/**
 * One edited line: its payload (and UI copy) elided when that makes it smaller, and every top-level
 * `sessionId` set to `newSessionId` when given. One walk over the record's top level serves both.
 */
export function editLine(text: string, parts: readonly PartShape[], target: ElideTarget, newSessionId: string | null): { text: string; elided: boolean } {
  const members = topLevelMembers(text);
  if (members === null) return { text, elided: false };
  const replacements = elision(text, members, parts, target);
  const elided = replacements.length > 0;
  if (newSessionId !== null) {
    const id = JSON.stringify(newSessionId);
    for (const m of members) if (m.key === 'sessionId') replacements.push({ span: m.span, text: id });
  }
  return { text: replacements.length === 0 ? text : replaceSpans(text, replacements), elided };
}

/** The line with every top-level `sessionId` value replaced by `id`. */
export function rewriteSessionId(text: string, id: string): string {
  const spans = topLevelValueSpans(text, 'sessionId');
  if (spans.length === 0) return text;
  const value = JSON.stringify(id);
  return replaceSpans(
    text,
    spans.map((span) => ({ span, text: value })),
  );
}

/**
 * Where a line's top-level `sessionId` values lie, in byte order and duplicates included, as the
 * skeleton read (skeleton.ts) locates them: a key spelled with escapes is the key it decodes to.
 * Null when the bytes are not one JSON object this walk can follow.
 */
export function topLevelSessionIdSpans(line: Buffer): ByteSpan[] | null {
  const spans: ByteSpan[] = [];
  try {
    const after = forEachRawMember(line, skipRawSpace(line, 0, line.length), line.length, (keyStart, keyEnd, value) => {
      if (rawKeyIs(line, keyStart, keyEnd, 'sessionId') || (rawHasEscape(line, keyStart, keyEnd) && JSON.parse(line.toString('utf8', keyStart - 1, keyEnd + 1)) === 'sessionId')) {
        spans.push(value);
      }
    });
    return skipRawSpace(line, after, line.length) === line.length ? spans : null;
  } catch (error) {
    if (error instanceof RawJsonError || error instanceof SyntaxError) return null;
    throw error;
  }
}

const SESSION_ID_BYTES = Buffer.from('sessionId', 'utf8');
const UNICODE_ESCAPE_BYTES = Buffer.from('\\u', 'utf8');

/**
 * topLevelSessionIdSpans for a line JSON.parse read as one object. Only a `\u` escape can spell a
 * letter of a key another way, so when the line holds no `\u` and spells `sessionId` at most once,
 * that one spelling is the only candidate: the walk stops at it, or finds it is not a top-level key,
 * instead of stepping over the whole record to look for a second. Otherwise the full walk decides.
 */
export function recordSessionIdSpans(line: Buffer): ByteSpan[] | null {
  const first = line.indexOf(SESSION_ID_BYTES);
  if (first === -1 ? line.indexOf(UNICODE_ESCAPE_BYTES) !== -1 : line.indexOf(SESSION_ID_BYTES, first + 1) !== -1 || line.indexOf(UNICODE_ESCAPE_BYTES) !== -1) {
    return topLevelSessionIdSpans(line);
  }
  if (first === -1) return [];
  const span = rawMemberSpan(line, 0, line.length, 'sessionId', 'first');
  return span === null ? [] : [span];
}

/**
 * The same rewrite on raw bytes whose sessionId values are already located, as the pieces of the
 * new line in order: no decoding, no parse, no joined copy.
 */
export function sessionIdRewriteParts(line: Buffer, spans: readonly ByteSpan[], idJson: Buffer): Buffer[] {
  const pieces: Buffer[] = [];
  let at = 0;
  for (const span of spans) {
    pieces.push(line.subarray(at, span.start), idJson);
    at = span.end;
  }
  pieces.push(line.subarray(at));
  return pieces;
}
