/**
 * The edits render makes inside one record's bytes. Each replaces exactly the bytes of one JSON
 * value, so every other byte of the line (key order, spacing, escapes) stays as the client wrote it.
 */
import {
  forEachRawMember,
  rawKeyDecodesTo,
  rawMemberSpan,
  RawJsonError,
  rawStringValueSpans,
  rawValueSpanAt,
  skipRawSpace,
  spliceRawSpans,
  type ByteSpan,
} from '../../../sdk/raw-json.js';
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

/** A single-line string of the UI copy shorter than this is a label, a path or a title, not output. */
const UI_COPY_TEXT_BYTES = 1024;

/**
 * Whether a string of the `toolUseResult` UI copy is output to stub: longer than the stub, and
 * either several lines or at least 1 KiB. Paths (`filePath`, `filenames`), titles, urls, statuses
 * and patch lines are single short lines that a transcript viewer shows beside the stub; stubbing
 * them would save a few bytes and lose where the output came from. `multiline`: the decoded string
 * holds a line break.
 */
function isUiCopyText(span: ByteSpan, multiline: boolean, stubBytes: number): boolean {
  const bytes = span.end - span.start;
  if (bytes <= stubBytes) return false;
  if (bytes >= UI_COPY_TEXT_BYTES) return true;
  return multiline;
}

/**
 * The `toolUseResult` UI copy of an elided result: its output text becomes the stub. The client
 * never sends this copy to the model, but it holds the same output (stdout, file content, the
 * edited file), so leaving it would keep the elided text in the fork and most of the bytes. Keys,
 * numbers, booleans and short single-line strings (types, statuses, paths) stay as they were, so
 * the client's transcript view still finds the shape it renders and the files it names.
 *
 * `stubFor` gets the UTF-8 size of the string it replaces: a `{bytes}` stub counts the text it
 * stands for. The copy is not always the size of the model's payload: for an output too large to
 * send, Claude Code gives the model a short `<persisted-output>` note and keeps the whole output
 * (over 100 KiB on real sessions) only here, where the payload's count would be wrong by that much.
 */
function uiCopyReplacements(line: Buffer, copies: readonly ByteSpan[], stubFor: (bytes: number) => string, anatomy: LineAnatomy): ByteReplacement[] {
  const out: ByteReplacement[] = [];
  // No stub is shorter than the one for 0 bytes, and a string's JSON is never shorter than its
  // UTF-8: a span no longer than that stub cannot be replaced, and is not decoded to find out.
  const shortestStub = jsonBytes(stubFor(0)).length;
  anatomy.uiStrings ??= copies.flatMap((copy) => rawStringValueSpans(line, copy));
  for (const span of anatomy.uiStrings) {
    if (span.end - span.start <= shortestStub) continue;
    let text = anatomy.uiTexts.get(span.start);
    if (text === undefined) {
      const value: unknown = JSON.parse(line.toString('utf8', span.start, span.end));
      text = typeof value === 'string' ? { bytes: Buffer.byteLength(value, 'utf8'), multiline: /[\r\n]/.test(value) } : null;
      anatomy.uiTexts.set(span.start, text);
    }
    if (text === null) continue;
    const stub = jsonBytes(stubFor(text.bytes));
    if (isUiCopyText(span, text.multiline, stub.length)) out.push({ span, bytes: stub });
  }
  return out;
}

interface ByteReplacement {
  span: ByteSpan;
  bytes: Buffer;
}

interface TopLevel {
  /** The last `message` member (the one JSON.parse keeps). */
  message: ByteSpan | null;
  toolUseResults: ByteSpan[];
  sessionIds: ByteSpan[];
}

/**
 * Where an edit of one line finds what it replaces, as far as editing it has looked: its top level,
 * the span at each rewrite path, the UI copy's strings and the size of those it decoded. All of it
 * follows from the line's bytes alone, so a render that edits the same bytes again (another stub,
 * another strategy's candidate) may pass the anatomy an earlier edit filled in instead of walking
 * and decoding the line again (render-from-parse.ts keeps them with the parse).
 */
export interface LineAnatomy {
  /** undefined: not looked at yet; null: not one object this walk can follow. */
  top?: TopLevel | null;
  /** By rewrite path joined with '/'; null when nothing is there. */
  valueSpans: Map<string, ByteSpan | null>;
  uiStrings?: ByteSpan[];
  /** By span start: the decoded string's UTF-8 size and whether it holds a line break; null when it is no string. */
  uiTexts: Map<number, { bytes: number; multiline: boolean } | null>;
}

export function newLineAnatomy(): LineAnatomy {
  return { valueSpans: new Map(), uiTexts: new Map() };
}

/** The members of a record's top level that an edit touches; null when the bytes cannot be followed. */
function topLevelOf(line: Buffer): TopLevel | null {
  const top: TopLevel = { message: null, toolUseResults: [], sessionIds: [] };
  try {
    const after = forEachRawMember(line, skipRawSpace(line, 0, line.length), line.length, (keyStart, keyEnd, value) => {
      if (rawKeyDecodesTo(line, keyStart, keyEnd, 'message')) top.message = value;
      else if (rawKeyDecodesTo(line, keyStart, keyEnd, 'toolUseResult')) top.toolUseResults.push(value);
      else if (rawKeyDecodesTo(line, keyStart, keyEnd, 'sessionId')) top.sessionIds.push(value);
    });
    return skipRawSpace(line, after, line.length) === line.length ? top : null;
  } catch (error) {
    if (error instanceof RawJsonError || error instanceof SyntaxError) return null;
    throw error;
  }
}

const jsonBytes = (value: unknown): Buffer => Buffer.from(JSON.stringify(value), 'utf8');

/**
 * The replacements that elide one line's payload and its UI copy, or none when the stubs would not
 * make the line smaller. `parts` are the line's eligible payload parts (payload.ts).
 */
function elision(line: Buffer, top: TopLevel, parts: readonly PartShape[], target: ElideTarget, anatomy: LineAnatomy): ByteReplacement[] {
  if (top.message === null) return [];
  const message = top.message;
  const out: ByteReplacement[] = [];
  let rewritten = false;
  for (const part of parts) {
    const stub = target.stub ?? stubText(target.template, part.bytes);
    for (const rewrite of partRewrites(part, stub)) {
      // Paths start at the record; the walk starts at its message.
      const key = rewrite.path.join('/');
      let span = anatomy.valueSpans.get(key);
      if (span === undefined) anatomy.valueSpans.set(key, (span = rawValueSpanAt(line, rewrite.path.slice(1), message)));
      // The line parsed, so a missing span means a shape this locator does not follow: leave the line whole.
      if (!span) return [];
      out.push({ span, bytes: jsonBytes(rewrite.value) });
      rewritten = true;
    }
  }
  if (!rewritten) return [];
  out.push(...uiCopyReplacements(line, top.toolUseResults, (bytes) => target.stub ?? stubText(target.template, bytes), anatomy));
  let saved = 0;
  for (const r of out) saved += r.span.end - r.span.start - r.bytes.length;
  return saved > 0 ? out : [];
}

/**
 * One edited line, as the pieces of the new line in order (the line itself when nothing changed):
 * its payload (and UI copy) elided when that makes it smaller, and every top-level `sessionId` set
 * to `newSessionId` when given. One walk over the record's top level serves both, and every byte
 * outside the replaced values stays as the client wrote it.
 */
export function editLine(
  line: Buffer,
  parts: readonly PartShape[],
  target: ElideTarget,
  newSessionId: string | null,
  anatomy: LineAnatomy = newLineAnatomy(),
): { pieces: Buffer[]; elided: boolean } {
  if (anatomy.top === undefined) anatomy.top = topLevelOf(line);
  const top = anatomy.top;
  if (top === null) return { pieces: [line], elided: false };
  const replacements = elision(line, top, parts, target, anatomy);
  const elided = replacements.length > 0;
  if (newSessionId !== null) {
    const id = jsonBytes(newSessionId);
    for (const span of top.sessionIds) replacements.push({ span, bytes: id });
  }
  return { pieces: replacements.length === 0 ? [line] : spliceRawSpans(line, replacements), elided };
}

/**
 * Where a line's top-level `sessionId` values lie, in byte order and duplicates included, as the
 * skeleton read (skeleton.ts) locates them: a key spelled with escapes is the key it decodes to.
 * Null when the bytes are not one JSON object this walk can follow.
 */
export function topLevelSessionIdSpans(line: Buffer): ByteSpan[] | null {
  return topLevelOf(line)?.sessionIds ?? null;
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
  return spliceRawSpans(
    line,
    spans.map((span) => ({ span, bytes: idJson })),
  );
}
