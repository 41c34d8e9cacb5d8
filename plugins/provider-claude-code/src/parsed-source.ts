/**
 * The analysis of the source this process parsed last, by the sha256 of its bytes. `eval` renders
 * every strategy's candidate of the source it has just parsed, and each render used to read every
 * record again for the tree the parse had already built. A render of the same bytes, read under the
 * same limits, may start from this analysis instead (render-from-parse.ts); the render still hashes
 * what it copies, so a file that changed is never rendered from a stale analysis.
 */
import type { Analysis } from './analysis.js';
import type { ReadLimits } from './limits.js';

interface Parsed {
  sha256: string;
  limits: ReadLimits;
  analysis: Analysis;
}

let last: Parsed | null = null;
const counts = { reused: 0, declined: 0 };

/** Keeps the analysis of a strict parse that succeeded: the only kind a render may start from. */
export function rememberParsed(sha256: string, limits: ReadLimits, analysis: Analysis): void {
  last = { sha256, limits, analysis };
}

export function forgetParsed(): void {
  last = null;
}

const sameLimits = (a: ReadLimits, b: ReadLimits) =>
  a.maxBytes === b.maxBytes && a.maxRecords === b.maxRecords && a.maxRecordBytes === b.maxRecordBytes;

/** The analysis of a parse of `bytes` bytes hashing to `sha256` under `limits`, if this process has it. */
export function parsedSource(sha256: string, bytes: number, limits: ReadLimits): Analysis | null {
  if (last === null || last.sha256 !== sha256 || last.analysis.scan.bytes !== bytes || !sameLimits(last.limits, limits)) return null;
  return last.analysis;
}

/** Renders that started from a parse, and those that began so and were then rendered in full. */
export function parsedSourceCounts(): { reused: number; declined: number } {
  return { ...counts };
}

export function countParsedSource(reused: boolean): void {
  if (reused) counts.reused += 1;
  else counts.declined += 1;
}
