/**
 * The analyses of the sources this process parsed last, by the sha256 of their bytes. `eval`
 * renders every strategy's candidate of the source it has just parsed, and each render used to
 * read every record again for the tree the parse had already built. A render of the same bytes,
 * read under the same limits, may start from the analysis instead (render-from-parse.ts); the
 * render still hashes what it copies, so a file that changed is never rendered from a stale one.
 */
import { LruMap } from '../../../sdk/lru-map.js';
import type { Analysis } from './analysis.js';
import type { ReadLimits } from './limits.js';

/**
 * The source and one more: `eval --rehearse` parses each candidate between renders of the source.
 * An analysis holds the whole table of a session, so no more are kept.
 */
const KEPT = 2;

const keyOf = (sha256: string, limits: ReadLimits) => `${sha256} ${limits.maxBytes} ${limits.maxRecords} ${limits.maxRecordBytes}`;

const kept = new LruMap<string, Analysis>(KEPT);
const counts = { reused: 0, declined: 0 };

/** Keeps the analysis of a strict parse that succeeded: the only kind a render may start from. */
export function rememberParsed(sha256: string, limits: ReadLimits, analysis: Analysis): void {
  kept.set(keyOf(sha256, limits), analysis);
}

export function forgetParsed(): void {
  kept.clear();
}

/** The analysis of a parse of `bytes` bytes hashing to `sha256` under `limits`, if this process has it. */
export function parsedSource(sha256: string, bytes: number, limits: ReadLimits): Analysis | null {
  const analysis = kept.get(keyOf(sha256, limits));
  return analysis !== undefined && analysis.scan.bytes === bytes ? analysis : null;
}

/** Renders that started from a parse, and those that began so and were then rendered in full. */
export function parsedSourceCounts(): { reused: number; declined: number } {
  return { ...counts };
}

export function countParsedSource(reused: boolean): void {
  if (reused) counts.reused += 1;
  else counts.declined += 1;
}
