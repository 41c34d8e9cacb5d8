/**
 * provider/render: the candidate transcript, written only into the staging file the host created.
 *
 * Two reads of the source, both bound to `source_sha256`: the first decides (live branch, which
 * lines are elidable, where the card attaches), the second copies. Untouched lines are copied byte
 * for byte; an elided line changes only its payload text; a fork changes only the `sessionId`
 * values; the state card and its last-prompt record are appended at the end.
 */
import type { DigestBlock, ElideEdit, ProviderRenderParams, ProviderRenderResult } from '../../../schemas/generated/types.js';
import { readJsonl } from '../../../sdk/jsonl.js';
import { invalidInput, sourceChanged } from '../../../sdk/serve.js';
import { StagingWriter } from '../../../sdk/staging.js';
import { digestTextBytes, MAX_DIGEST_BYTES, renderStateCard } from '../../../sdk/state-card.js';
import { isElidable } from '../../../sdk/tokens.js';
import { absolutePath, analyse, requireClaude, type Analysis } from './analysis.js';
import { cardRecords } from './card-record.js';
import { withInputErrors } from './errors.js';
import { toItem } from './items.js';
import { findValueSpan, replaceSpans, topLevelValueSpans, type Replacement } from './json-span.js';
import { readLimits } from './limits.js';
import { refuseAmbiguous } from './parse.js';
import { eligibleParts, partRewrites, stubText } from './payload.js';
import { isObject, type RawRecord } from './records.js';
import { requireFileId } from './session-id.js';

interface ElideTarget {
  template: string;
  /** A complete stub for this line, used instead of the template. */
  stub: string | null;
}

interface RenderPlan {
  elide: Map<number, ElideTarget>;
  digest: DigestBlock | null;
  newSessionId: string | null;
  now: string;
}

function oneLine(text: string, what: string): string {
  if (/[\r\n]/.test(text)) throw invalidInput(`${what} must be one line`);
  return text;
}

function readPlan(params: ProviderRenderParams): RenderPlan {
  const elide = new Map<number, ElideTarget>();
  let digest: DigestBlock | null = null;
  for (const edit of params.edits) {
    if (edit.op === 'elide') addElide(elide, edit);
    else if (edit.op === 'inject_digest') {
      if (digest !== null) throw invalidInput('a plan may inject one state card');
      if (digestTextBytes(edit.digest) > MAX_DIGEST_BYTES) throw invalidInput(`the state card is over ${MAX_DIGEST_BYTES} bytes of text`);
      digest = edit.digest;
    }
    // provider_compact and cache_edit ask the client or the API layer; the file carries nothing.
  }
  const stamp = Date.parse(params.now);
  if (Number.isNaN(stamp)) throw invalidInput('now must be an ISO-8601 time');
  const newSessionId = params.new_session_id ? requireFileId(params.new_session_id, 'new_session_id') : null;
  return { elide, digest, newSessionId, now: new Date(stamp).toISOString() };
}

function addElide(elide: Map<number, ElideTarget>, edit: ElideEdit): void {
  const template = oneLine(edit.stub_template, 'stub_template');
  for (const line of edit.line_indexes) {
    if (elide.has(line)) continue;
    const stub = edit.per_item_stubs?.[String(line)];
    elide.set(line, { template, stub: stub === undefined ? null : oneLine(stub, 'a per-item stub') });
  }
}

/** Every elide target must be a live tool result with an elidable payload: nothing else is edited. */
function checkTargets(a: Analysis, elide: Map<number, ElideTarget>): void {
  for (const line of elide.keys()) {
    if (!Number.isSafeInteger(line) || line < 0 || line >= a.scan.table.length) throw invalidInput(`an elide edit targets line ${line + 1}, past the end of the transcript`);
    if (!isElidable(toItem(a.scan.table, line, a.branch))) throw invalidInput(`line ${line + 1} is not an elidable tool result on the live branch`);
  }
}

/** Parses a line of the copying read; null when it no longer parses (the hash check then refuses). */
function parseLine(text: string): RawRecord | null {
  try {
    const value: unknown = JSON.parse(text);
    return isObject(value) ? value : null;
  } catch {
    return null;
  }
}

/** The payload of one line replaced by stubs; null when nothing would shrink. */
function elideLine(text: string, target: ElideTarget): string | null {
  const record = parseLine(text);
  if (record === null) return null;
  const replacements: Replacement[] = [];
  for (const part of eligibleParts(record)) {
    const stub = target.stub ?? stubText(target.template, part.bytes);
    for (const rewrite of partRewrites(part, stub)) {
      const span = findValueSpan(text, rewrite.path);
      // The text parsed, so a missing span means a shape this locator does not follow: leave the line whole.
      if (!span) return null;
      replacements.push({ span, text: JSON.stringify(rewrite.value) });
    }
  }
  if (replacements.length === 0) return null;
  const next = replaceSpans(text, replacements);
  return Buffer.byteLength(next, 'utf8') < Buffer.byteLength(text, 'utf8') ? next : null;
}

function rewriteSessionId(text: string, id: string): string {
  const spans = topLevelValueSpans(text, 'sessionId');
  if (spans.length === 0) return text;
  const value = JSON.stringify(id);
  return replaceSpans(
    text,
    spans.map((span) => ({ span, text: value })),
  );
}

const SESSION_ID_KEY = Buffer.from('"sessionId"');

interface CardPlan {
  leafLine: number;
  promptLine: number;
}

function planCard(a: Analysis): CardPlan {
  const lastLine = a.scan.recordCount - 1;
  if (a.scan.problems.some((p) => p.line === lastLine && p.state === 'invalid_json')) {
    throw invalidInput(`${a.scan.path} ends with a torn record (a write in progress?); a state card cannot be appended after it`);
  }
  const promptLine = a.branch.path.find((line) => a.scan.table.kind(line) === 'user') ?? -1;
  return { leafLine: a.branch.leafLine, promptLine };
}

export interface RenderHooks {
  /** Runs between the deciding read and the copying read; tests change the source here. */
  betweenReads?: () => void;
}

export async function renderCandidate(params: ProviderRenderParams, hooks: RenderHooks = {}): Promise<ProviderRenderResult> {
  const path = absolutePath(params.path);
  const plan = readPlan(params);
  return withInputErrors(path, async () => {
    const limits = readLimits({});
    const a = await analyse(path, { limits, strict: true });
    if (a.scan.sha256 !== params.source_sha256) throw sourceChanged(`${path} changed since it was hashed`);
    requireClaude(a.scan);
    if (a.kind !== 'session') throw invalidInput(`${path} is a ${a.kind} file, not a session the client can resume`);
    refuseAmbiguous(a);
    checkTargets(a, plan.elide);
    const card = plan.digest ? planCard(a) : null;
    hooks.betweenReads?.();

    const writer = new StagingWriter(params.staging_path);
    try {
      let elided = 0;
      const captured = new Map<number, RawRecord>();
      const lastLine = a.scan.recordCount - 1;
      const copy = await readJsonl(path, { maxBytes: limits.maxBytes, maxRecords: limits.maxRecords }, (rec) => {
        const target = plan.elide.get(rec.index);
        const keep = card !== null && (rec.index === card.leafLine || rec.index === card.promptLine);
        const fork = plan.newSessionId !== null && rec.bytes.includes(SESSION_ID_KEY);
        let out = rec.bytes;
        if (target || keep || fork) {
          const original = rec.bytes.toString('utf8');
          let text = original;
          if (keep) {
            const parsed = parseLine(original);
            if (parsed) captured.set(rec.index, parsed);
          }
          if (target) {
            const next = elideLine(text, target);
            if (next !== null) {
              text = next;
              elided += 1;
            }
          }
          if (fork) text = rewriteSessionId(text, plan.newSessionId!);
          if (text !== original) out = Buffer.from(text, 'utf8');
        }
        writer.writeRecord(out, rec.terminated || (card !== null && rec.index === lastLine));
      });
      if (copy.sha256 !== params.source_sha256) throw sourceChanged(`${path} changed while the candidate was written`);

      let appended = 0;
      if (card !== null) {
        const table = a.scan.table;
        let taken: Set<string> | null = null;
        const leaf = captured.get(card.leafLine) ?? null;
        const leafSessionId = typeof leaf?.sessionId === 'string' ? leaf.sessionId : a.scan.sessionId;
        const records = cardRecords({
          text: renderStateCard(plan.digest!),
          parentUuid: card.leafLine >= 0 ? table.uuid[card.leafLine] ?? null : null,
          leaf,
          prompt: captured.get(card.promptLine) ?? null,
          sessionId: plan.newSessionId ?? leafSessionId,
          now: plan.now,
          isTaken: (uuid) => (taken ??= new Set(table.uuid.filter((u): u is string => u !== null))).has(uuid),
        });
        writer.writeRecord(JSON.stringify(records.card));
        writer.writeRecord(JSON.stringify(records.lastPrompt));
        appended = 2;
      }
      const done = writer.finish();
      return { ...done, elided_records: elided, appended_records: appended };
    } catch (error) {
      writer.abort();
      throw error;
    }
  });
}
