/**
 * The typed-retention study: replays three masking arms over N rounds on private copies and scores
 * the manifest's checks after each round, or scores an already-compacted file as it is. Nothing here
 * calls a model or touches the provider's session: parsing, the elide strategy, rendering and
 * verification are injected, and every byte stays in memory or in the caller's private copies.
 */
import type {
  CompactionPlan,
  DigestBlock,
  Edit,
  Finding,
  ResolvedPolicy,
  RetentionArm,
  RetentionManifest,
  RetentionStudyReport,
  RetentionStudyRow,
  Transcript,
} from '../../schemas/generated/types.js';
import { elisionSavings } from '../../sdk/tokens.js';
import { digestOverheadTokens, digestTextBytes, MAX_DIGEST_BYTES } from '../../sdk/state-card.js';
import { GobstopperError } from '../errors.js';
import { sha256Hex } from '../digest.js';
import { estimatedContext } from '../policy/context.js';
import { assertRounds, assertStudySourceSize, bindManifest, STUDY_LIMITS, type BoundCheck } from './study-manifest.js';
import { scoreRetention } from './study-score.js';
import { extractSlots, type SlotExtractor } from './study-slots.js';
import { verifyDelta } from './verify-delta.js';

export interface StudyDeps {
  /** Parses bytes of the session's format into a transcript (the provider's parse over a private copy). */
  parse(bytes: Buffer): Promise<Transcript>;
  /** The elide strategy's proposal for `transcript` under `policy`; null for no plan. */
  proposeElide(input: { transcript: Transcript; policy: ResolvedPolicy; context_tokens: number }): Promise<CompactionPlan | null>;
  /** Renders `edits` over `bytes` (the provider's render into a private staging file) and returns the result. */
  render(bytes: Buffer, edits: Edit[]): Promise<Buffer>;
  /** The provider's verify findings for `bytes`. */
  verify(bytes: Buffer): Promise<Finding[]>;
  /** The kernel's plan admission; throws with a one-line reason on a bad plan. */
  validate?(transcript: Transcript, policy: ResolvedPolicy, edits: Edit[]): void;
  slots?: SlotExtractor;
  now?: () => number;
}

export const STUDY_ARMS: readonly RetentionArm[] = ['observation_masking', 'typed_masking', 'typed_digest'];

export const STUDY_UNMEASURED = ['provider_native_compaction', 'semantic_summarization', 'continuation_task_success', 'billed_savings', 'evidence_retrieval'];
export const STUDY_LIMITATIONS = [
  'Labels come from the manifest; retention is measured only for the spans it names.',
  'The tiers measure decoded text presence, origin and word coverage, not understanding or agent behaviour.',
  'Typed masking keeps whole records that hold pinned spans, so it can stop short of the floor.',
  'Token counts are estimates from record sizes, not provider usage or billing.',
  'Replay is static: later rounds re-compact the same session, which tests stability, not new work.',
];

const CARD_SUMMARY = 'retention card: pinned spans carried verbatim';

/** Estimated context of a transcript: the study ignores reported usage so rounds compare like for like. */
/**
 * The typed_digest card: pinned checks in manifest order, until the next one would push the card
 * past the digest byte limit. A card field is one line, so a multi-line span cannot ride it
 * verbatim and is left off rather than carried in a form that no longer matches.
 */
export function retentionCard(checks: readonly BoundCheck[], coversItems: number): { digest: DigestBlock; carried: BoundCheck[] } {
  const digest: DigestBlock = { summary: CARD_SUMMARY, covers_items: coversItems, concepts: [], decisions: [], open_tasks: [] };
  const carried: BoundCheck[] = [];
  for (const check of checks) {
    if (!check.pinned || /[\r\n]/.test(check.text)) continue;
    const text = check.kind === 'constraint' ? `constraint: ${check.text}` : check.kind === 'procedure' ? `procedure: ${check.text}` : check.text;
    if (digestTextBytes(digest) + Buffer.byteLength(text, 'utf8') > MAX_DIGEST_BYTES) break;
    if (check.kind === 'open_task') digest.open_tasks!.push(text);
    else if (check.kind === 'procedure') digest.concepts!.push(text);
    else digest.decisions!.push(text);
    carried.push(check);
  }
  return { digest, carried };
}

/**
 * Shapes the elide proposal for an arm: walk its lines again down to the real floor, skipping lines
 * that reclaim nothing and (typed_masking) records holding pinned spans; add the card (typed_digest);
 * and drop everything when the savings gate fails.
 */
export function shapeArmPlan(
  arm: RetentionArm,
  plan: CompactionPlan,
  transcript: Transcript,
  policy: ResolvedPolicy,
  checks: readonly BoundCheck[],
  pinnedRecords: ReadonlySet<number>,
): { edits: Edit[]; after: number; carried: BoundCheck[] } {
  const before = estimatedContext(transcript.items);
  const savings = new Map(transcript.items.map((i) => [i.line_index, elisionSavings(i)]));
  let projected = before;
  const edits: Edit[] = [];
  for (const edit of plan.edits) {
    if (edit.op !== 'elide') {
      edits.push(edit);
      continue;
    }
    const kept = edit.line_indexes.filter((line) => {
      const saved = savings.get(line) ?? 0;
      if (projected <= policy.floor_tokens || saved === 0 || (arm === 'typed_masking' && pinnedRecords.has(line))) return false;
      projected = Math.max(0, projected - saved);
      return true;
    });
    if (kept.length === 0) continue;
    const stubs = edit.per_item_stubs ? Object.fromEntries(Object.entries(edit.per_item_stubs).filter(([k]) => kept.includes(Number(k)))) : undefined;
    edits.push({ ...edit, line_indexes: kept, ...(stubs ? { per_item_stubs: stubs } : {}) });
  }
  let onCard: BoundCheck[] = [];
  if (arm === 'typed_digest' && edits.length > 0) {
    const covered = edits.reduce((n, e) => n + (e.op === 'elide' ? e.line_indexes.length : 0), 0);
    const { digest, carried } = retentionCard(checks, Math.max(1, covered));
    onCard = carried;
    projected += digestOverheadTokens(digest);
    edits.push({ op: 'inject_digest', digest });
  }
  if (before - projected < policy.min_savings_tokens) return { edits: [], after: before, carried: [] };
  return { edits, after: projected, carried: onCard };
}

export interface StudyRunInput {
  provider: string;
  source: Buffer;
  manifest: RetentionManifest;
  manifest_sha256: string;
  policy: ResolvedPolicy;
  rounds: number;
  /** Told after each round of each arm: rounds done out of arms × rounds. */
  onRound?: (done: number, total: number) => void;
}

function reportShell(input: { provider: string; source: Buffer; manifest: RetentionManifest; manifest_sha256: string; policy: ResolvedPolicy | null; rounds: number }, sourceFindings: readonly Finding[]): RetentionStudyReport {
  return {
    schema: 'gobstopper-retention-study-v1',
    provider: input.provider,
    source_sha256: sha256Hex(input.source),
    manifest_sha256: input.manifest_sha256,
    after_sha256: null,
    label_source: input.manifest.label_source,
    replay_mode: 'static_stress',
    provider_calls: 0,
    source_verify_errors: sourceFindings.filter((f) => f.severity === 'error').length,
    source_verify_warnings: sourceFindings.filter((f) => f.severity === 'warning').length,
    trigger_tokens: input.policy?.effective_trigger_tokens ?? 0,
    floor_tokens: input.policy?.floor_tokens ?? 0,
    min_savings_tokens: input.policy?.min_savings_tokens ?? 0,
    keep_recent_tool_outputs: input.policy?.keep_recent_tool_outputs ?? 0,
    rounds: input.rounds,
    checks_total: input.manifest.checks.length,
    rows: [],
    unmeasured: [...STUDY_UNMEASURED],
    limitations: [...STUDY_LIMITATIONS],
  };
}

/** Replays the three arms for `rounds` rounds each and scores every round. */
export async function runRetentionStudy(deps: StudyDeps, input: StudyRunInput): Promise<RetentionStudyReport> {
  assertRounds(input.rounds);
  assertStudySourceSize(input.source.length, 'replay');
  const now = deps.now ?? Date.now;
  const initial = await deps.parse(input.source);
  const checks = bindManifest(input.manifest, input.source, initial.items, extractSlots(input.source, initial.items, deps.slots));
  const sourceFindings = await deps.verify(input.source);
  const pinnedRecords = new Set(checks.filter((c) => c.pinned).map((c) => c.record));
  const report = reportShell(input, sourceFindings);
  const totalRounds = STUDY_ARMS.length * input.rounds;
  input.onRound?.(0, totalRounds);

  for (const arm of STUDY_ARMS) {
    let current = input.source;
    let currentTranscript = initial;
    let currentFindings: readonly Finding[] = sourceFindings;
    let applied = 0;
    const armStarted = now();
    for (let round = 1; round <= input.rounds; round++) {
      if (now() - armStarted > STUDY_LIMITS.armBudgetMs) throw new GobstopperError('study_timeout', `study arm ${arm} ran past its ${STUDY_LIMITS.armBudgetMs / 1000} s budget at round ${round}`);
      const started = now();
      const transcript = currentTranscript;
      const before = estimatedContext(transcript.items);
      const selectionPolicy: ResolvedPolicy = { ...input.policy, floor_tokens: 0 };
      const proposal = await deps.proposeElide({ transcript, policy: selectionPolicy, context_tokens: before });
      const shaped = proposal ? shapeArmPlan(arm, proposal, transcript, input.policy, checks, pinnedRecords) : { edits: [], after: before, carried: [] as BoundCheck[] };
      let next = current;
      if (shaped.edits.length > 0) {
        deps.validate?.(transcript, input.policy, shaped.edits);
        next = await deps.render(current, shaped.edits);
      }
      const changed = !next.equals(current);
      if (changed) applied += 1;
      const afterTranscript = changed ? await deps.parse(next) : transcript;
      const findings = changed ? await deps.verify(next) : currentFindings;
      const slots = extractSlots(next, afterTranscript.items, deps.slots);
      const retention = scoreRetention(checks, slots);
      if (arm === 'typed_masking') {
        const lost = checks.find((c) => c.pinned && retention.missing_ids.includes(c.id));
        if (lost) throw new GobstopperError('study_invariant', `typed masking lost pinned check ${lost.id} at round ${round}; the render did not keep a pinned record in place`);
      }
      if (arm === 'typed_digest' && shaped.carried.length > 0) {
        const lost = shaped.carried.find((c) => !slots.some((s) => s.text.includes(c.text)));
        if (lost) throw new GobstopperError('study_invariant', `typed digest lost card-carried check ${lost.id} at round ${round}; the rendered card does not hold it`);
      }
      const delta = verifyDelta(sourceFindings, findings);
      const afterTokens = estimatedContext(afterTranscript.items);
      report.rows.push({
        arm,
        round,
        status: changed ? 'applied' : 'no_change',
        applied_rounds: applied,
        card_items: shaped.carried.length,
        pinned_records: arm === 'typed_masking' ? pinnedRecords.size : 0,
        source_bytes: current.length,
        result_bytes: next.length,
        result_sha256: sha256Hex(next),
        estimated_context_before: before,
        estimated_context_after: afterTokens,
        floor_reached: afterTokens <= input.policy.floor_tokens,
        verify_errors: delta.errors,
        verify_warnings: delta.warnings,
        new_verify_errors: delta.newErrors,
        preexisting_verify_errors: delta.preexistingErrors,
        retention,
        duration_ms: Math.max(0, Math.round(now() - started)),
      });
      current = next;
      currentTranscript = afterTranscript;
      currentFindings = findings;
      input.onRound?.(report.rows.length, totalRounds);
    }
  }
  return report;
}

export interface AuditInput {
  provider: string;
  source: Buffer;
  source_transcript: Transcript;
  source_findings: readonly Finding[];
  after: Buffer;
  after_transcript: Transcript;
  after_findings: readonly Finding[];
  manifest: RetentionManifest;
  manifest_sha256: string;
  slots?: SlotExtractor;
}

/** `--against`: scores an already-compacted file against the manifest of its source, without replaying. */
export function auditRetention(input: AuditInput): RetentionStudyReport {
  assertStudySourceSize(input.source.length, 'audit');
  assertStudySourceSize(input.after.length, 'audit');
  const started = Date.now();
  const checks = bindManifest(input.manifest, input.source, input.source_transcript.items, extractSlots(input.source, input.source_transcript.items, input.slots));
  const slots = extractSlots(input.after, input.after_transcript.items, input.slots);
  const report = reportShell({ ...input, policy: null, rounds: 1 }, input.source_findings);
  report.replay_mode = 'realized_audit';
  report.after_sha256 = sha256Hex(input.after);
  const delta = verifyDelta(input.source_findings, input.after_findings);
  const row: RetentionStudyRow = {
    arm: 'realized',
    round: 1,
    status: 'realized',
    applied_rounds: 0,
    card_items: 0,
    pinned_records: 0,
    source_bytes: input.source.length,
    result_bytes: input.after.length,
    result_sha256: report.after_sha256,
    estimated_context_before: estimatedContext(input.source_transcript.items),
    estimated_context_after: estimatedContext(input.after_transcript.items),
    floor_reached: null,
    verify_errors: delta.errors,
    verify_warnings: delta.warnings,
    new_verify_errors: delta.newErrors,
    preexisting_verify_errors: delta.preexistingErrors,
    retention: scoreRetention(checks, slots),
    duration_ms: Date.now() - started,
  };
  report.rows.push(row);
  return report;
}
