/**
 * The candidates this process has just rendered from a kept parse: `eval` renders one per strategy
 * and verifies each right after, and `apply` verifies its fork. Such a candidate is the source with
 * some lines edited and a card appended; every other line is a copy of the source line at the same
 * index, in a fork with its top-level sessionId values set to the fork's id. A verify of the file
 * starts from that (verify-rendered.ts): a line equal byte for byte to what the render made of the
 * source line at its index has the source row the parse already read, and only the edited and
 * appended lines are read again.
 */
import { LruMap } from '../../../sdk/lru-map.js';
import type { Analysis } from './analysis.js';
import type { ForkSpans } from './fork-spans.js';
import type { FileIdentity } from './source-window.js';
import type { ReadLimits } from './limits.js';

export interface RenderedFile {
  /** sha256 and size of every byte the render wrote. */
  sha256: string;
  bytes: number;
  /** The parse of the source the render copied lines from. */
  source: Analysis;
  /** That source's lines, as read and hashed: a copied line must equal its source line byte for byte. Null for a fork. */
  sourceLines: readonly Buffer[] | null;
  /** A fork's source, as it was when the render read and hashed it: its lines are read back from it (source-window.ts). */
  sourceFile: { path: string; identity: FileIdentity } | null;
  /** The limits that parse read under: a verify under others reads in full. */
  limits: ReadLimits;
  /** Source lines the render edited (elide targets); every other source line was copied as it is. */
  edited: ReadonlySet<number>;
  /** The fork's session id, written over each copied line's top-level sessionId values; null when not a fork. */
  newSessionId: string | null;
  /** Where the fork's render found those values, line by line (looked for again where it noted none). */
  forkSpans: ForkSpans | null;
}

/** Two: `eval` verifies each candidate right after its render, and renders are queued two deep. */
const KEPT = 2;

const rendered = new LruMap<string, RenderedFile>(KEPT);
const counts = { reused: 0, declined: 0 };

export function rememberRendered(path: string, file: RenderedFile): void {
  rendered.set(path, file);
}

/**
 * What the last render to `path` wrote, if this process made it; taken, not kept: the staging file
 * is verified once, and a second verify reads it in full.
 */
export function takeRendered(path: string): RenderedFile | null {
  const file = rendered.get(path);
  if (file === undefined) return null;
  rendered.delete(path);
  return file;
}

export function forgetRendered(): void {
  rendered.clear();
}

/** Verifies that started from a render and finished so, and those that were then read in full. */
export function renderedVerifyCounts(): { reused: number; declined: number } {
  return { ...counts };
}

export function countRenderedVerify(reused: boolean): void {
  if (reused) counts.reused += 1;
  else counts.declined += 1;
}
