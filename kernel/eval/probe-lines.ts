/**
 * Which source lines hold each probe, so a candidate is scored by reading only the lines it
 * changed. Renders edit records in place and append new ones: a candidate line byte-identical to
 * the source line at the same index holds exactly the probes that source line holds. A probe never
 * spans a newline (probes are cut from one line), so "appears anywhere in the candidate" is the
 * same as "appears in an unchanged line that holds it, or in one of the changed lines".
 */
import type { Probe } from './probes.js';

const NEWLINE = 0x0a;

/** What one probe's searches of the source have found so far. */
interface ProbeSearch {
  /** Source lines found to hold the probe. */
  holders: number[];
  /** 1 for each source line already searched for it (a holder included). */
  searched: Uint8Array;
}

export class ProbeLines {
  /** Byte offset where each source line starts; one extra entry past the end. */
  private readonly starts: number[];
  /**
   * Per probe, what is known of the other source lines that hold it. Searched on need only, and
   * only in lines the candidate at hand kept: candidates keep mostly the same lines (every strategy
   * keeps the lines it cannot elide), so each later candidate searches the few lines it newly kept,
   * and the first one a third of the source rather than all of it.
   */
  private readonly searches: Array<ProbeSearch | undefined>;
  /**
   * Answers by candidate buffer. Strategies that propose the same rewrite share one rendered
   * buffer (the eval's candidate cache), and each of their rows is scored; the buffer is never
   * written after it is read, so its answer stands.
   */
  private readonly answers = new WeakMap<Buffer, readonly boolean[]>();

  constructor(
    private readonly source: Buffer,
    private readonly probes: readonly Probe[],
  ) {
    this.starts = lineStarts(source);
    this.searches = new Array(probes.length);
  }

  /** For each probe (in order), whether `candidate` contains its bytes. */
  recalled(candidate: Buffer): boolean[] {
    let answer = this.answers.get(candidate);
    if (answer === undefined) {
      answer = this.search(candidate);
      this.answers.set(candidate, answer);
    }
    return [...answer];
  }

  private search(candidate: Buffer): boolean[] {
    const lineCount = this.starts.length - 1;
    const unchanged = new Uint8Array(lineCount);
    const changed: Buffer[] = [];
    let start = 0;
    let index = 0;
    while (start < candidate.length) {
      let end = candidate.indexOf(NEWLINE, start);
      if (end === -1) end = candidate.length;
      if (index < lineCount && this.sameAsSource(index, candidate, start, end)) unchanged[index] = 1;
      else if (end > start) changed.push(candidate.subarray(start, end));
      start = end + 1;
      index += 1;
    }
    // Joined by newlines, so no probe can match across two changed lines.
    const rest = joinLines(changed);
    return this.probes.map((probe, p) => {
      // A probe was cut from its own line, so a kept line keeps it.
      if (unchanged[probe.line_index] === 1) return true;
      const known = (this.searches[p] ??= { holders: [], searched: new Uint8Array(lineCount) });
      if (known.holders.some((line) => unchanged[line] === 1)) return true;
      return rest.indexOf(probe.bytes) !== -1 || this.heldByUnsearched(known, probe.bytes, unchanged);
    });
  }

  private sameAsSource(index: number, candidate: Buffer, start: number, end: number): boolean {
    const from = this.starts[index]!;
    const to = this.starts[index + 1]! - 1;
    return end - start === to - from && candidate.compare(this.source, from, to, start, end) === 0;
  }

  /**
   * Whether a line marked in `unchanged` that was not searched for this probe before holds it;
   * marks what it searched, and notes the holder it stopped at.
   */
  private heldByUnsearched(known: ProbeSearch, bytes: Buffer, unchanged: Uint8Array): boolean {
    const lineCount = unchanged.length;
    const { searched } = known;
    let line = 0;
    while (line < lineCount) {
      if (unchanged[line] !== 1 || searched[line] === 1) {
        line += 1;
        continue;
      }
      // Consecutive kept lines not searched yet are one stretch of source bytes.
      let end = line + 1;
      while (end < lineCount && unchanged[end] === 1 && searched[end] !== 1) end += 1;
      const from = this.starts[line]!;
      const at = this.source.subarray(from, this.starts[end]! - 1).indexOf(bytes);
      if (at === -1) {
        searched.fill(1, line, end);
        line = end;
        continue;
      }
      const holder = this.lineAt(from + at);
      searched.fill(1, line, holder + 1);
      known.holders.push(holder);
      return true;
    }
    return false;
  }

  private lineAt(offset: number): number {
    let lo = 0;
    let hi = this.starts.length - 2;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.starts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }
}

/** Start offsets of every line (split at \n) plus, last, the length + 1 (as if a newline followed). */
function lineStarts(bytes: Buffer): number[] {
  const starts = [0];
  let at = bytes.indexOf(NEWLINE);
  while (at !== -1) {
    starts.push(at + 1);
    at = bytes.indexOf(NEWLINE, at + 1);
  }
  if (starts[starts.length - 1] !== bytes.length + 1) starts.push(bytes.length + 1);
  return starts;
}

function joinLines(lines: Buffer[]): Buffer {
  if (lines.length === 0) return Buffer.alloc(0);
  const parts: Buffer[] = [];
  const newline = Buffer.from([NEWLINE]);
  for (const line of lines) parts.push(line, newline);
  return Buffer.concat(parts);
}
