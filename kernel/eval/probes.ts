/**
 * Probes: short verbatim strings sampled from the source (paths, commands, decisions, error
 * signatures, file names, identifiers) and looked for in a rendered candidate. A cheap, repeatable
 * stand-in for "did this compaction throw away what the session still needs". Every strategy of one
 * eval is scored against the same probe set, so their numbers compare.
 *
 * Probes hold transcript bytes; they stay in memory. What leaves this module (ProbeScore) carries
 * counts, kinds, line numbers and short hashes only.
 */
import { createHash } from 'node:crypto';
import type { MissedProbe, ProbeKind, ProbeKindTally, ProbeScore, TranscriptItem } from '../../schemas/generated/types.js';
import { ProbeLines } from './probe-lines.js';
import { MAX_PROBE_BYTES, MIN_PROBE_BYTES, PROBE_KINDS, SCANNERS, clampToCharBoundary, type ProbeSink } from './probe-scan.js';

export const MAX_PROBES = 64;
export const MAX_MISSED_PROBES = 8;
/** Per-kind caps (ProbeKind order) so one noisy kind, a build log full of paths, cannot crowd out the rest. */
export const PROBE_KIND_CAPS: readonly number[] = [24, 16, 12, 16, 16, 16];
/** At most this many probes of one kind from one line: a directory listing is not twenty probes. */
export const PROBES_PER_LINE_PER_KIND = 4;

export interface Probe {
  kind: ProbeKind;
  /** Zero-based physical line of the source the probe was lifted from. */
  line_index: number;
  /** The verbatim bytes (1..64); transcript content, never serialized. */
  bytes: Buffer;
}

export interface ProbeSet {
  probes: Probe[];
  /** Where the probes sit in the source, when the set was sampled from one (scores candidates fast). */
  lines?: ProbeLines;
}

/** Lines whose record is live context: an item with est_tokens > 0 sits on them. */
export function liveLines(items: readonly TranscriptItem[]): Set<number> {
  const live = new Set<number>();
  for (const item of items) if (item.est_tokens > 0) live.add(item.line_index);
  return live;
}

class BucketSink implements ProbeSink {
  lineIndex = 0;
  perLine = 0;
  line: Buffer = Buffer.alloc(0);
  text = '';
  readonly out: Probe[] = [];

  constructor(
    private readonly kind: ProbeKind,
    private readonly cap: number,
    private readonly seen: Set<string>,
  ) {}

  full(): boolean {
    return this.out.length >= this.cap || this.perLine >= PROBES_PER_LINE_PER_KIND;
  }

  offer(start: number, end: number): void {
    const stop = end - start > MAX_PROBE_BYTES ? clampToCharBoundary(this.text, start + MAX_PROBE_BYTES) : end;
    if (this.full() || stop - start < MIN_PROBE_BYTES) return;
    const key = this.text.slice(start, stop);
    if (this.seen.has(key)) return;
    this.seen.add(key);
    // Copy: a probe must not pin the whole source buffer in memory.
    this.out.push({ kind: this.kind, line_index: this.lineIndex, bytes: Buffer.from(this.line.subarray(start, stop)) });
    this.perLine += 1;
  }
}

/**
 * Samples the probe set from the raw source bytes. Only live lines are scanned: a probe on a dead
 * branch or behind a provider compaction is not context any strategy could keep, and scanning it
 * would spend the caps on it. One pass over the bytes; scanners stop once their kind is full.
 */
export function extractProbes(source: Buffer, items: readonly TranscriptItem[]): ProbeSet {
  const live = liveLines(items);
  const seen = new Set<string>();
  const sinks = PROBE_KINDS.map((kind, k) => new BucketSink(kind, PROBE_KIND_CAPS[k]!, seen));
  let start = 0;
  let index = 0;
  while (start <= source.length) {
    let end = source.indexOf(0x0a, start);
    const last = end === -1;
    if (last) end = source.length;
    if (live.has(index) && end > start) {
      const lineEnd = source[end - 1] === 0x0d ? end - 1 : end;
      const line = source.subarray(start, lineEnd);
      let text: string | null = null;
      for (let k = 0; k < SCANNERS.length; k++) {
        const sink = sinks[k]!;
        if (sink.out.length >= PROBE_KIND_CAPS[k]!) continue;
        text ??= source.toString("latin1", start, lineEnd);
        sink.line = line;
        sink.text = text;
        sink.lineIndex = index;
        sink.perLine = 0;
        SCANNERS[k]!(text, sink);
      }
    }
    if (last) break;
    start = end + 1;
    index += 1;
  }
  // Round-robin across kinds so the global cap leaves a mixed sample, then back to source order.
  const probes: Probe[] = [];
  const cursors = sinks.map(() => 0);
  let progressed = true;
  while (probes.length < MAX_PROBES && progressed) {
    progressed = false;
    for (let k = 0; k < sinks.length && probes.length < MAX_PROBES; k++) {
      const bucket = sinks[k]!.out;
      if (cursors[k]! < bucket.length) {
        probes.push(bucket[cursors[k]!]!);
        cursors[k]! += 1;
        progressed = true;
      }
    }
  }
  const kindOrder = (kind: ProbeKind) => PROBE_KINDS.indexOf(kind);
  probes.sort((a, b) => a.line_index - b.line_index || kindOrder(a.kind) - kindOrder(b.kind));
  return { probes, lines: new ProbeLines(source, probes) };
}

/**
 * First line of the protected tail: the line of the oldest still-protected elidable item (the newest
 * `keepRecent` elidable items are protected), else the last item's line. null for an empty transcript.
 */
export function tailStartLine(items: readonly TranscriptItem[], keepRecent: number): number | null {
  if (items.length === 0) return null;
  const sorted = isSortedByLine(items) ? items : [...items].sort((a, b) => a.line_index - b.line_index);
  let protectedSeen = 0;
  let oldestProtected: number | null = null;
  for (let i = sorted.length - 1; i >= 0 && protectedSeen < keepRecent; i--) {
    const item = sorted[i]!;
    if (item.est_tokens > 0 && (item.elidable_bytes ?? 0) > 0) {
      protectedSeen += 1;
      oldestProtected = item.line_index;
    }
  }
  return oldestProtected ?? sorted[sorted.length - 1]!.line_index;
}

function isSortedByLine(items: readonly TranscriptItem[]): boolean {
  for (let i = 1; i < items.length; i++) if (items[i - 1]!.line_index > items[i]!.line_index) return false;
  return true;
}

export function probeFingerprint(probe: Probe): MissedProbe {
  return {
    kind: probe.kind,
    line_index: probe.line_index,
    bytes: probe.bytes.length,
    sha256_prefix: createHash('sha256').update(probe.bytes).digest('hex').slice(0, 12),
  };
}

/**
 * Scores a rendered candidate: a probe is recalled when its bytes appear anywhere in the candidate.
 * `tailStart` null means nothing is protected.
 */
export function scoreProbes(set: ProbeSet, candidate: Buffer, tailStart: number | null): ProbeScore {
  const totals = PROBE_KINDS.map(() => 0);
  const recalledByKind = PROBE_KINDS.map(() => 0);
  let recalled = 0;
  let tailTotal = 0;
  let tailRecalled = 0;
  const missed: MissedProbe[] = [];
  const found = set.lines ? set.lines.recalled(candidate) : set.probes.map((p) => candidate.indexOf(p.bytes) !== -1);
  for (const [p, probe] of set.probes.entries()) {
    const k = PROBE_KINDS.indexOf(probe.kind);
    totals[k]! += 1;
    const inTail = tailStart !== null && probe.line_index >= tailStart;
    if (inTail) tailTotal += 1;
    if (found[p]) {
      recalled += 1;
      recalledByKind[k]! += 1;
      if (inTail) tailRecalled += 1;
    } else if (missed.length < MAX_MISSED_PROBES) missed.push(probeFingerprint(probe));
  }
  const total = set.probes.length;
  const byKind: ProbeKindTally[] = PROBE_KINDS.map((kind, k) => ({ kind, total: totals[k]!, recalled: recalledByKind[k]! }));
  return {
    probes_total: total,
    probes_recalled: recalled,
    recall: total === 0 ? 1 : recalled / total,
    tail_probes_total: tailTotal,
    tail_probes_recalled: tailRecalled,
    tail_intact: tailRecalled === tailTotal,
    by_kind: byKind,
    missed_probes: missed,
  };
}
