/**
 * The gobstopper-retention-v1 manifest: which spans of one source the study tracks, named by record,
 * JSON pointer, byte range and hash, never by text. Preparing one picks heuristic candidates;
 * loading one checks it against the exact source bytes before anything is measured.
 */
import { closeSync, fstatSync, openSync, readSync, constants as fsConstants } from 'node:fs';
import type { RetentionCheck, RetentionKind, RetentionManifest, TranscriptItem } from '../../schemas/generated/types.js';
import { validateRetentionManifest } from '../../schemas/generated/validators.js';
import { GobstopperError } from '../errors.js';
import { allowedValues } from '../plugins/protocol/schema-check.js';
import { literalAlternatives } from '../../sdk/literal-pattern.js';
import { isElidable } from '../../sdk/tokens.js';
import { contentTokens } from './study-text.js';
import { extractSlots, type SlotExtractor, type SlotOrigin, type TextSlot } from './study-slots.js';
import { sha256Hex } from '../digest.js';
import { quotedFlagNumber } from '../text/numbers.js';
import { jsonProblemAt } from '../text/json-problem.js';

export const RETENTION_SCHEMA = 'gobstopper-retention-v1';
const MIB = 1024 * 1024;
export const STUDY_LIMITS = {
  replaySourceBytes: 64 * MIB,
  auditSourceBytes: 512 * MIB,
  manifestBytes: 1 * MIB,
  maxChecks: 256,
  maxSpanBytes: 4096,
  maxPointerChars: 512,
  heuristicPerKind: 16,
  minRounds: 1,
  maxRounds: 10,
  armBudgetMs: 120_000,
} as const;

export const RETENTION_KINDS: readonly RetentionKind[] = ['constraint', 'procedure', 'open_task', 'fact', 'preference', 'episode'];
/** Kinds the typed arms keep in place (typed_masking) or carry on the card (typed_digest). */
export const PINNED_KINDS: ReadonlySet<RetentionKind> = new Set(['constraint', 'procedure', 'open_task']);

const studyError = (code: string, message: string) => new GobstopperError(code, message);


/** Refuses sources over the limit for the operation (64 MiB for replay, 512 MiB to prepare or audit). */
export function assertStudySourceSize(bytes: number, mode: 'replay' | 'audit' | 'prepare'): void {
  const limit = mode === 'replay' ? STUDY_LIMITS.replaySourceBytes : STUDY_LIMITS.auditSourceBytes;
  if (bytes > limit) {
    const hint = mode === 'replay' ? '; score an already-compacted file with --against instead' : '';
    throw studyError('study_source_too_large', `study source is ${bytes} bytes; ${mode === 'replay' ? 'replay' : mode === 'audit' ? '--against' : 'manifest preparation'} reads at most ${limit / MIB} MiB${hint}`);
  }
}

export function assertRounds(rounds: number): void {
  if (!Number.isInteger(rounds) || rounds < STUDY_LIMITS.minRounds || rounds > STUDY_LIMITS.maxRounds) {
    const got = quotedFlagNumber(rounds, STUDY_LIMITS.minRounds, STUDY_LIMITS.maxRounds);
    throw new GobstopperError('invalid_rounds', `--rounds must be a whole number from ${STUDY_LIMITS.minRounds} to ${STUDY_LIMITS.maxRounds}, got ${got}`, { exit: 2 });
  }
}

// ---------------------------------------------------------------- heuristic preparation

/** Marks a line may hold anywhere, and starts it may begin with, per kind (lowercase). */
const CONSTRAINT_MARKS = ['never ', 'must not ', 'do not ', 'only if '];
const OPEN_TASK_MARKS = ['- [ ]'];
const OPEN_TASK_STARTS = ['todo:', 'pending:'];
/** After any leading dashes, backticks and spaces. */
const PROCEDURE_STARTS = ['cargo ', 'npm ', 'bun ', 'pytest ', 'python3 ', 'git ', 'run `'];
const FACT_STARTS = ['error:', 'decision:', 'failed'];

/** Every mark and start classifyCandidate looks for. */
export const CLASSIFY_MARKS: readonly string[] = [...CONSTRAINT_MARKS, ...OPEN_TASK_MARKS, ...OPEN_TASK_STARTS, ...PROCEDURE_STARTS, ...FACT_STARTS];

/**
 * Matches every text holding a line classifyCandidate would classify, and some more: the same marks
 * anywhere, the same starts at the start of any line after blanks, dashes or backticks. Each mark
 * is ASCII with no `k` (the one ASCII letter another character lowercases to alone; a test holds
 * every mark to this), so the case-blind match finds whatever `toLowerCase` would. Most texts hold
 * none, and are not cut into lines at all.
 */
const MAY_CLASSIFY = new RegExp(
  `${literalAlternatives([...CONSTRAINT_MARKS, ...OPEN_TASK_MARKS])}|^[\\s\\-\`]*(?:${literalAlternatives([...OPEN_TASK_STARTS, ...FACT_STARTS, ...PROCEDURE_STARTS])})`,
  'im',
);

export const mayHoldCandidates = (text: string): boolean => MAY_CLASSIFY.test(text);

/** First match wins: constraint, open task, procedure, fact. Other kinds only come from reviewed manifests. */
export function classifyCandidate(line: string): RetentionKind | null {
  const lower = line.toLowerCase();
  if (CONSTRAINT_MARKS.some((m) => lower.includes(m))) return 'constraint';
  if (OPEN_TASK_MARKS.some((m) => lower.includes(m)) || OPEN_TASK_STARTS.some((s) => lower.startsWith(s))) return 'open_task';
  const bare = lower.replace(/^[-` ]+/, '');
  if (PROCEDURE_STARTS.some((s) => bare.startsWith(s))) return 'procedure';
  if (FACT_STARTS.some((s) => lower.startsWith(s))) return 'fact';
  return null;
}

/**
 * Builds a heuristic manifest: each slot's lines, trimmed and classified; at most 16 per kind, at most
 * 4 KiB each, each text once. Slots of elidable records come first (that is where a compaction can
 * lose something), then the rest, each group in source order.
 */
export function prepareManifest(source: Buffer, items: readonly TranscriptItem[], extractor?: SlotExtractor): RetentionManifest {
  assertStudySourceSize(source.length, 'prepare');
  const elidable = new Set(items.filter((i) => isElidable(i)).map((i) => i.line_index));
  const slots = extractSlots(source, items, extractor);
  const ordered = [...slots.filter((s) => elidable.has(s.record)), ...slots.filter((s) => !elidable.has(s.record))];
  const perKind = new Map<RetentionKind, number>();
  const seen = new Set<string>();
  const checks: RetentionCheck[] = [];
  for (const slot of ordered) {
    if (!mayHoldCandidates(slot.text)) continue;
    let offset = 0;
    for (const line of slot.text.split(/(?<=\n)/)) {
      const lineBytes = Buffer.byteLength(line, 'utf8');
      const text = line.trim();
      const kind = text ? classifyCandidate(text) : null;
      const textBytes = Buffer.byteLength(text, 'utf8');
      // A line with escape codes (a coloured tool output) is not a span a manifest may name.
      if (kind && !CONTROL_CHARACTERS.test(text) && (perKind.get(kind) ?? 0) < STUDY_LIMITS.heuristicPerKind && textBytes <= STUDY_LIMITS.maxSpanBytes && !seen.has(text) && checks.length < STUDY_LIMITS.maxChecks) {
        seen.add(text);
        perKind.set(kind, (perKind.get(kind) ?? 0) + 1);
        const start = offset + Buffer.byteLength(line.slice(0, line.indexOf(text)), 'utf8');
        checks.push({
          id: `check-${checks.length}`,
          kind,
          record_index: slot.record,
          pointer: slot.pointer,
          start_byte: start,
          end_byte: start + textBytes,
          sha256: sha256Hex(text),
        });
      }
      offset += lineBytes;
    }
  }
  if (checks.length === 0) throw studyError('no_retention_candidates', 'no heuristic retention candidates in this session; write a reviewed manifest instead');
  return { schema: RETENTION_SCHEMA, source_sha256: sha256Hex(source), label_source: 'heuristic', checks };
}

export function manifestJson(manifest: RetentionManifest): string {
  return JSON.stringify(manifest, null, 2) + '\n';
}

export function countByKind(manifest: RetentionManifest): Record<string, number> {
  const out: Record<string, number> = {};
  for (const c of manifest.checks) out[c.kind] = (out[c.kind] ?? 0) + 1;
  return out;
}

// ---------------------------------------------------------------- loading and binding

/** Reads a manifest file: a regular file (symlinks refused) of at most 1 MiB. */
export function readManifestFile(path: string): { bytes: Buffer; sha256: string } {
  let fd: number;
  try {
    // Without O_NONBLOCK a FIFO's open waits for a writer forever; opened, it is refused below.
    fd = openSync(path, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'does not exist' : code === 'ELOOP' ? 'is a symbolic link' : `cannot be opened (${code ?? 'error'})`;
    throw studyError('invalid_manifest', `retention manifest ${path} ${why}`);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw studyError('invalid_manifest', `retention manifest ${path} is not a regular file`);
    if (st.size > STUDY_LIMITS.manifestBytes) throw studyError('invalid_manifest', `retention manifest ${path} is ${st.size} bytes; at most 1 MiB is allowed`);
    const bytes = Buffer.alloc(st.size);
    let got = 0;
    while (got < st.size) {
      const n = readSync(fd, bytes, got, st.size - got, got);
      if (n === 0) break;
      got += n;
    }
    return { bytes: bytes.subarray(0, got), sha256: sha256Hex(bytes.subarray(0, got)) };
  } finally {
    closeSync(fd);
  }
}

/** Parses and schema-checks manifest bytes; each bad input gets its own one-line error. */
export function parseManifest(bytes: Buffer): RetentionManifest {
  if (bytes.length > STUDY_LIMITS.manifestBytes) throw studyError('invalid_manifest', `retention manifest is ${bytes.length} bytes; at most 1 MiB is allowed`);
  let value: unknown;
  // A reviewed manifest is edited by hand; an editor's byte-order mark is not a reason to refuse it.
  const text = bytes.toString('utf8').replace(/^\uFEFF/, '');
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw studyError('invalid_manifest', `retention manifest is not valid JSON: ${jsonProblemAt(text, (error as Error).message)}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw studyError('invalid_manifest', 'retention manifest must be a JSON object');
  const obj = value as Record<string, unknown>;
  if (obj.schema !== RETENTION_SCHEMA) throw studyError('invalid_manifest', `retention manifest schema must be ${RETENTION_SCHEMA}`);
  if ('growth' in obj) throw studyError('invalid_manifest', 'retention manifest growth schedules are not supported; replay is static');
  if (Array.isArray(obj.checks)) {
    if (obj.checks.length === 0) throw studyError('invalid_manifest', 'retention manifest has no checks; it needs 1 to 256');
    if (obj.checks.length > STUDY_LIMITS.maxChecks) throw studyError('invalid_manifest', `retention manifest has ${obj.checks.length} checks; at most ${STUDY_LIMITS.maxChecks} are allowed`);
  }
  if (!validateRetentionManifest(value)) {
    const errors = validateRetentionManifest.errors ?? [];
    const first = errors[0];
    const where = first?.instancePath || '/';
    // A closed vocabulary (a check's kind) is answered with its values, not "the allowed values".
    const said = (first && allowedValues(errors, first)) ?? first?.message ?? 'invalid';
    throw studyError('invalid_manifest', `retention manifest does not match ${RETENTION_SCHEMA} at ${where}: ${said}`);
  }
  return value as RetentionManifest;
}

/** A check bound to the source: its text (memory only), origin and content tokens. */
export interface BoundCheck {
  id: string;
  kind: RetentionKind;
  record: number;
  pointer: string;
  origin: SlotOrigin;
  elidable: boolean;
  pinned: boolean;
  text: string;
  tokens: Set<string>;
}

const slotKey = (record: number, pointer: string) => `${record}\u0000${pointer}`;

function isContinuationByte(b: number | undefined): boolean {
  return b !== undefined && (b & 0xc0) === 0x80;
}

/** Control characters other than tab and line breaks mark binary or escape data, not prose. */
// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTERS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;

/** Why `bytes[start, end)` is not text, or null when it is. */
function notTextReason(bytes: Buffer, start: number, end: number): string | null {
  if (end > bytes.length) return `it ends past the slot's ${bytes.length} bytes`;
  if (isContinuationByte(bytes[start]) || (end < bytes.length && isContinuationByte(bytes[end]))) return 'it cuts a UTF-8 character';
  const text = bytes.toString('utf8', start, end);
  if (CONTROL_CHARACTERS.test(text)) return 'it holds control characters';
  if (text.trim().length === 0) return 'it is blank';
  return null;
}

/**
 * Checks a parsed manifest against the source and binds each span: the manifest must name this
 * source's SHA-256, ids must be unique, and each span must be text at a live slot whose bytes hash
 * to the check's sha256.
 */
export function bindManifest(manifest: RetentionManifest, source: Buffer, items: readonly TranscriptItem[], slots: readonly TextSlot[]): BoundCheck[] {
  const sourceSha = sha256Hex(source);
  if (manifest.source_sha256 !== sourceSha) {
    // A session that grew since its manifest was written is the usual case, and it is the same session.
    throw studyError(
      'manifest_source_mismatch',
      `retention manifest is bound to another source (manifest ${manifest.source_sha256.slice(0, 12)}…, this source ${sourceSha.slice(0, 12)}…): the session changed after the manifest was prepared, or the manifest is another session's; prepare a new one with --prepare-manifest <new file>`,
    );
  }
  const bySlot = new Map<string, TextSlot>();
  for (const s of slots) if (!bySlot.has(slotKey(s.record, s.pointer))) bySlot.set(slotKey(s.record, s.pointer), s);
  const elidable = new Set(items.filter((i) => isElidable(i)).map((i) => i.line_index));
  const ids = new Set<string>();
  return manifest.checks.map((check) => {
    if (ids.has(check.id)) throw studyError('invalid_manifest', `retention manifest repeats check id ${check.id}`);
    ids.add(check.id);
    const length = check.end_byte - check.start_byte;
    if (length <= 0) throw studyError('invalid_manifest', `check ${check.id}: end_byte must be greater than start_byte`);
    if (length > STUDY_LIMITS.maxSpanBytes) throw studyError('invalid_manifest', `check ${check.id}: span is ${length} bytes; at most ${STUDY_LIMITS.maxSpanBytes} are allowed`);
    const slot = bySlot.get(slotKey(check.record_index, check.pointer));
    if (!slot) throw studyError('invalid_manifest', `check ${check.id}: record ${check.record_index} at ${check.pointer || '(root)'} is not live text in this source`);
    const bytes = Buffer.from(slot.text, 'utf8');
    const reason = notTextReason(bytes, check.start_byte, check.end_byte);
    if (reason) throw studyError('span_not_text', `check ${check.id}: bytes ${check.start_byte}..${check.end_byte} of record ${check.record_index} are not text (${reason})`);
    const span = bytes.subarray(check.start_byte, check.end_byte);
    if (sha256Hex(span) !== check.sha256) throw studyError('span_hash_mismatch', `check ${check.id}: span hash does not match the source bytes at record ${check.record_index}`);
    const text = span.toString('utf8');
    return {
      id: check.id,
      kind: check.kind,
      record: check.record_index,
      pointer: check.pointer,
      origin: slot.origin,
      elidable: elidable.has(check.record_index),
      pinned: PINNED_KINDS.has(check.kind),
      text,
      tokens: contentTokens(text),
    };
  });
}
