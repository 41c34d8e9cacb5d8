/**
 * The six probe scanners: each looks at one physical line and offers verbatim candidates, as byte
 * ranges of the line, to a sink. A line arrives as a latin1 string, one character per byte, so
 * offsets are byte offsets and the engine's native string search does the scanning: paths are found
 * from their slashes, file names from their dots, identifiers by one regular expression, keywords by
 * indexOf. That keeps a 10 MiB session well under a second.
 */
import type { ProbeKind } from '../../schemas/generated/types.js';
import { literalAlternatives } from '../../sdk/literal-pattern.js';

export const PROBE_KINDS: readonly ProbeKind[] = ['path', 'command', 'decision', 'error_signature', 'file_name', 'identifier'];

/** Longest probe, in bytes; longer candidates are cut back to a character boundary. */
export const MAX_PROBE_BYTES = 64;
export const MIN_PROBE_BYTES = 3;
/** Identifiers shorter than this are ordinary words. */
export const MIN_IDENTIFIER_BYTES = 10;

const COMMAND_WORDS = [
  'cargo', 'rustc', 'rustup', 'git', 'bun', 'npm', 'npx', 'yarn', 'pnpm', 'node', 'deno',
  'python', 'python3', 'pip', 'uv', 'pytest', 'go', 'make', 'docker', 'kubectl', 'brew', 'curl',
];
const DECISION_KEYS = ['decided', 'decide', 'decision', 'will use', 'chose', 'chosen', 'going with'];
const ERROR_KEYS = ['error[', 'error: ', 'FAILED', 'panicked'];
const FILE_EXTENSIONS = new Set(
  'rs ts tsx js jsx mjs cjs py go rb java kt c h cc cpp hpp cs swift toml json jsonl yaml yml md txt sh sql html css xml lock cfg ini'.split(' '),
);

const SPACE = 0x20;
const DOT = 0x2e;
const SLASH = 0x2f;
const TILDE = 0x7e;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const LETTER_U = 0x75;

// One lookup table per character class; index = byte value.
const WORD = new Uint8Array(256);
const PATH = new Uint8Array(256);
const FILE_NAME = new Uint8Array(256);
const COMMAND_ARG = new Uint8Array(256);
for (let b = 0; b < 256; b++) {
  const alnum = (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a);
  WORD[b] = alnum || b === 0x5f ? 1 : 0;
  const c = String.fromCharCode(b);
  PATH[b] = WORD[b] || '-./~+@'.includes(c) ? 1 : 0;
  FILE_NAME[b] = WORD[b] || '-.'.includes(c) ? 1 : 0;
  COMMAND_ARG[b] = WORD[b] || '-./~+=:%@'.includes(c) ? 1 : 0;
}

const isAlnum = (b: number) => WORD[b] === 1 && b !== 0x5f;
const isDigit = (b: number) => b >= 0x30 && b <= 0x39;
const isUpper = (b: number) => b >= 0x41 && b <= 0x5a;
const isLower = (b: number) => b >= 0x61 && b <= 0x7a;

/**
 * Whether the character at `at` is the letter of a JSON escape (`\n`, `\t`, `\u00e9`): an odd run
 * of backslashes ends right before it. Lines are scanned as written, so without this the `n` of a
 * newline escape would read as the first letter of the name after it (`\nREADME.md`).
 */
function escapeLetterAt(s: string, at: number): boolean {
  let k = at;
  while (k > 0 && s.charCodeAt(k - 1) === BACKSLASH) k--;
  return (at - k) % 2 === 1;
}

/** Where a run of text characters that starts at `start` really starts: past an escape's letters. */
function afterEscape(s: string, start: number, end: number): number {
  if (start >= end || !escapeLetterAt(s, start)) return start;
  return Math.min(end, start + (s.charCodeAt(start) === LETTER_U ? 5 : 1));
}

/** Receives candidates, as [start, end) byte offsets of the line, for one kind; says when it wants no more. */
export interface ProbeSink {
  full(): boolean;
  offer(start: number, end: number): void;
}

/** Moves `end` back so a window never splits a multi-byte UTF-8 character (`s` is the line in latin1). */
export function clampToCharBoundary(s: string, end: number): number {
  let e = Math.min(end, s.length);
  while (e > 0 && e < s.length && (s.charCodeAt(e) & 0xc0) === 0x80) e--;
  return e;
}

function trimTrailing(s: string, start: number, end: number, spaces: boolean): number {
  let e = end;
  while (e > start) {
    const c = s.charCodeAt(e - 1);
    if (c === DOT || (spaces && c === SPACE)) e--;
    else break;
  }
  return e;
}

/** `stem.ext`: the stem starts alphanumeric, the extension is 1-8 alphanumerics (from `known` when given). */
function hasExtension(s: string, start: number, end: number, known: Set<string> | null): boolean {
  const dot = s.lastIndexOf('.', end - 1);
  if (dot <= start || dot >= end - 1) return false;
  if (!isAlnum(s.charCodeAt(start))) return false;
  if (end - dot - 1 > 8) return false;
  for (let i = dot + 1; i < end; i++) if (!isAlnum(s.charCodeAt(i))) return false;
  return known === null || known.has(s.slice(dot + 1, end).toLowerCase());
}

function isPathToken(s: string, start: number, end: number): boolean {
  if (end - start < 3) return false;
  const slash = s.indexOf('/', start);
  if (slash === -1 || slash >= end) return false;
  const first = s.charCodeAt(start);
  if (first === SLASH) return true;
  if ((first === TILDE || first === DOT) && s.charCodeAt(start + 1) === SLASH) return true;
  const lastSlash = s.lastIndexOf('/', end - 1);
  return hasExtension(s, lastSlash + 1, end, null);
}

/**
 * Visits each maximal run of `cls` characters that contains `anchor`, left to right: the only runs
 * that can qualify, found without looking at every byte.
 */
function anchoredRuns(s: string, anchor: string, cls: Uint8Array, sink: ProbeSink, accept: (start: number, end: number) => boolean): void {
  let from = 0;
  const n = s.length;
  while (!sink.full()) {
    const at = s.indexOf(anchor, from);
    if (at === -1) return;
    let a = at;
    while (a > 0 && cls[s.charCodeAt(a - 1)] === 1) a--;
    let b = at + 1;
    while (b < n && cls[s.charCodeAt(b)] === 1) b++;
    a = afterEscape(s, a, b);
    const end = trimTrailing(s, a, b, false);
    if (end > a && accept(a, end)) sink.offer(a, end);
    from = b;
  }
}

export function scanPaths(s: string, sink: ProbeSink): void {
  anchoredRuns(s, '/', PATH, sink, (a, e) => isPathToken(s, a, e));
}

export function scanFileNames(s: string, sink: ProbeSink): void {
  anchoredRuns(s, '.', FILE_NAME, sink, (a, e) => hasExtension(s, a, e, FILE_EXTENSIONS));
}

// Longer words first inside the alternation so `python3` is not read as `python`.
const byLength = (words: readonly string[]) => [...words].sort((a, b) => b.length - a.length);
const COMMAND_RE = new RegExp(`(?:${literalAlternatives(byLength(COMMAND_WORDS))}) `, 'g');
const DECISION_RE = new RegExp(literalAlternatives(byLength(DECISION_KEYS)), 'gi');
const COMMAND_INDEX = new Map(COMMAND_WORDS.map((w, i) => [w, i]));
const DECISION_INDEX = new Map(DECISION_KEYS.map((w, i) => [w, i]));

/**
 * All matches of a keyword alternation, ordered as if each keyword were searched in turn (keyword
 * list order, then position): that order decides which candidates a full per-line quota keeps.
 */
function keywordHits(s: string, re: RegExp, index: Map<string, number>, normalize: (m: string) => string): Array<[number, number, number]> {
  const hits: Array<[number, number, number]> = [];
  re.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(s)) !== null) {
    const word = normalize(m[0]);
    hits.push([index.get(word) ?? 0, m.index, word.length]);
  }
  if (hits.length > 1) hits.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  return hits;
}

export function scanCommands(s: string, sink: ProbeSink): void {
  for (const [, at, length] of keywordHits(s, COMMAND_RE, COMMAND_INDEX, (m) => m.slice(0, -1))) {
    if (sink.full()) return;
    // A command word, not the tail of another word or a path component (`mycargo`, `/usr/bin/git`);
    // an escape's letter before it is a separator (`\nnpm test`).
    if (at > 0 && PATH[s.charCodeAt(at - 1)] === 1 && !escapeLetterAt(s, at - 1)) continue;
    const afterWord = at + length;
    let j = afterWord;
    while (j < s.length && (s.charCodeAt(j) === SPACE || COMMAND_ARG[s.charCodeAt(j)] === 1)) j++;
    const end = trimTrailing(s, at, clampToCharBoundary(s, Math.min(j, at + MAX_PROBE_BYTES)), true);
    let argStart = afterWord;
    while (argStart < end && s.charCodeAt(argStart) === SPACE) argStart++;
    if (end - argStart >= 2) sink.offer(at, end);
  }
}

function offerWindow(s: string, at: number, sink: ProbeSink): void {
  const end = trimTrailing(s, at, clampToCharBoundary(s, at + MAX_PROBE_BYTES), true);
  if (end > at) sink.offer(at, end);
}

export function scanDecisions(s: string, sink: ProbeSink): void {
  for (const [, at] of keywordHits(s, DECISION_RE, DECISION_INDEX, (m) => m.toLowerCase())) {
    if (sink.full()) return;
    offerWindow(s, at, sink);
  }
}

export function scanErrorSignatures(s: string, sink: ProbeSink): void {
  for (const key of ERROR_KEYS) {
    let at = s.indexOf(key);
    while (at !== -1) {
      if (sink.full()) return;
      offerWindow(s, at, sink);
      at = s.indexOf(key, at + key.length);
    }
  }
}

// Only words holding `_` or a capital can qualify, so the scan jumps between those characters.
const IDENTIFIER_MARK = /[_A-Z]/g;

export function scanIdentifiers(s: string, sink: ProbeSink): void {
  const n = s.length;
  IDENTIFIER_MARK.lastIndex = 0;
  let m: RegExpExecArray | null;
  while (!sink.full() && (m = IDENTIFIER_MARK.exec(s)) !== null) {
    let start = m.index;
    while (start > 0 && WORD[s.charCodeAt(start - 1)] === 1) start--;
    let end = m.index + 1;
    while (end < n && WORD[s.charCodeAt(end)] === 1) end++;
    IDENTIFIER_MARK.lastIndex = end;
    start = afterEscape(s, start, end);
    if (end - start < MIN_IDENTIFIER_BYTES || isDigit(s.charCodeAt(start))) continue;
    // A lone quoted word in JSONL is a key or an enum value of the format, not session content.
    if (start > 0 && s.charCodeAt(start - 1) === QUOTE && s.charCodeAt(end) === QUOTE) continue;
    let underscore = false;
    let upper = false;
    let lower = false;
    for (let i = start; i < end; i++) {
      const b = s.charCodeAt(i);
      if (b === 0x5f) underscore = true;
      else if (isUpper(b)) upper = true;
      else if (isLower(b)) lower = true;
    }
    if (underscore || (upper && lower)) sink.offer(start, end);
  }
}

/** Scanners in ProbeKind order. */
export const SCANNERS: ReadonlyArray<(line: string, sink: ProbeSink) => void> = [
  scanPaths,
  scanCommands,
  scanDecisions,
  scanErrorSignatures,
  scanFileNames,
  scanIdentifiers,
];
