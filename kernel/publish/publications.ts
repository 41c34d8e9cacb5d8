/**
 * Files gobstopper published (forks, restores) that no client has written to since. Their
 * modification time is the publication's, not a client's, so they are not live. A compaction's
 * output keeps its source's records, usage reports included: until a client resumes it, its last
 * report describes the context before the compaction, so every command counts what the plan
 * projected instead (its receipt keeps it, and the events log), or, without that, the records' own
 * estimate. A file whose size and hash are still the published ones has not been appended to
 * (sessions only grow), so it has not been resumed.
 */
import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import type { OperationReceipt, UsageSample } from '../../schemas/generated/types.js';
import { errorMessage } from '../filesystem-message.js';
import { vaultLayout } from '../vault/layout.js';
import { readEvents } from './events.js';
import { readableReceipts } from './receipt.js';

/** A compaction whose output a published file holds: apply's fork, or an undo that restored it. */
export interface CompactionOutput {
  receipt: OperationReceipt;
  /** The plan's projected context after the compaction, from its receipt or the events log; null when neither kept it. */
  projectedContext: number | null;
}

export interface Publication {
  receipt: OperationReceipt;
  compaction: CompactionOutput | null;
}

/** Paths are compared as the file system resolves them: a home reached through a link is the same home. */
function canonical(path: string): string {
  try {
    return realpathSync.native(path);
  } catch {
    return resolve(path);
  }
}

/** What gobstopper published, and the warning a listing of sessions owes for receipts it could not read. */
export interface Publications {
  /** Completed publications by canonical path. */
  found: Map<string, Publication>;
  /**
   * The same by the sha256 of the bytes published: a copy of a published file elsewhere (a home
   * copied or moved, a fork copied by hand) holds the same records, stale report included.
   */
  byContent: Map<string, Publication>;
  /** unreadableReceiptsWarning of the receipts (or the whole operations folder) that could not be read. */
  receiptsWarning: string | null;
  /**
   * Files a stopped run published without finishing their record (the receipt still pending), by
   * canonical path: gobstopper's own all the same, until the next apply of their source finishes it.
   */
  unfinished: Map<string, Publication>;
}

/**
 * Completed publications. Best effort: an unreadable vault or log means none (or no projections)
 * are known, and a receipt that cannot be read is named in the warning, for a listing that would
 * otherwise show its fork as a session of its own without saying why.
 */
export async function publications(env: NodeJS.ProcessEnv): Promise<Publications> {
  const unreadable: string[] = [];
  const heard = (error: unknown) => unreadable.push(errorMessage(error));
  // A damaged receipt hides its own fork only: the others are still known for what they are.
  const all = await readableReceipts(vaultLayout(env), heard).catch((error: unknown) => {
    heard(error);
    return [] as OperationReceipt[];
  });
  const receipts = all.filter((r) => r.completed);
  const found = await publicationsOf(receipts, env);
  const byContent = new Map([...found.values()].map((p) => [p.receipt.output_sha256, p]));
  const unfinished = new Map(all.filter((r) => !r.completed).map((receipt) => [canonical(receipt.path), { receipt, compaction: null }]));
  return { found, byContent, receiptsWarning: unreadableReceiptsWarning(unreadable), unfinished };
}

async function publicationsOf(receipts: OperationReceipt[], env: NodeJS.ProcessEnv): Promise<Map<string, Publication>> {
  const found = new Map<string, Publication>();
  if (receipts.length === 0) return found;
  // Receipts keep the projection; the events log (up to 16 MiB) is read only for older receipts.
  const olderReceipts = receipts.some((r) => r.kind === 'compact' && r.context_tokens_after === undefined);
  const events = olderReceipts ? (await readEvents({ env }).catch(() => ({ events: [] }))).events : [];
  const projected = new Map(events.filter((e) => e.outcome === 'applied' && e.snapshot_after_sha256).map((e) => [e.snapshot_after_sha256!, e.context_tokens_after]));
  // A fork or a restore made from a compaction's output (or from a copy of one) holds the same
  // records, stale report included: each is tied to the compaction its bytes came from.
  const byOutput = new Map(receipts.map((r) => [r.output_sha256, r]));
  const compactionOf = (receipt: OperationReceipt): OperationReceipt | undefined => {
    let at: OperationReceipt | undefined = receipt;
    for (let hops = 0; at && hops < 64; hops += 1) {
      if (at.kind === 'compact') return at;
      at = byOutput.get(at.source_sha256);
    }
    return undefined;
  };
  for (const receipt of receipts) {
    const compact = compactionOf(receipt);
    const compaction = compact ? { receipt: compact, projectedContext: compact.context_tokens_after ?? projected.get(compact.output_manifest_sha256) ?? null } : null;
    found.set(canonical(receipt.path), { receipt, compaction });
  }
  return found;
}

/**
 * One line for receipts `publications` could not read: the first one's trouble and repair, and what
 * it costs a listing of sessions.
 */
function unreadableReceiptsWarning(messages: readonly string[]): string | null {
  if (messages.length === 0) return null;
  const more = messages.length > 1 ? ` (and ${messages.length - 1} more receipt(s) that cannot be read)` : '';
  return `${messages[0]}${more}; a fork or restore such a receipt describes is listed as a session of its own: its context is its source's last report, and it counts as live for 180 s after it was written`;
}

/** The publication gobstopper made at `path`, whatever has been written to the file since. */
export function publishedAt(found: Map<string, Publication>, path: string): Publication | null {
  return found.size === 0 ? null : (found.get(canonical(path)) ?? null);
}

/** Whether a published file still holds exactly what was published: its size, and its hash when known. */
export function stillAsPublished(publication: Publication, bytes: number | null | undefined, sha256?: string): boolean {
  return bytes === publication.receipt.bytes_after && (sha256 === undefined || sha256 === publication.receipt.output_sha256);
}

/** The publication at `path` if the file is still exactly as published. */
export function untouchedPublication(found: Map<string, Publication>, path: string, bytes: number | null | undefined, sha256?: string): Publication | null {
  const publication = publishedAt(found, path);
  return publication && stillAsPublished(publication, bytes, sha256) ? publication : null;
}

/**
 * The projection that stands in for a compaction output's stale report, or null when none is kept.
 * A compaction only shrinks the context: a projection above the report it replaces is not one.
 */
export function countedProjection(compaction: CompactionOutput, reported: number | null): number | null {
  const projection = compaction.projectedContext;
  return projection !== null && (reported === null || projection <= reported) ? projection : null;
}

/**
 * How a compaction output's stale report was replaced: by its projection, or (without a kept one)
 * by the records' own estimate, which leaves out the system prompt and tools and so reads low.
 */
export type StaleReport = 'projected' | 'estimated';

/** What a parsed session is once gobstopper's own publications are told apart. */
export interface PublicationView {
  /** Updated within the live window by a client (a file gobstopper just wrote is not live). */
  active: boolean;
  /** The usage to count: a compaction's output nobody has resumed carries its source's last report. */
  usage: UsageSample;
  /** Set when `usage` is not the file's report, and how it was replaced. */
  staleReport: StaleReport | null;
}

export async function viewOfPublication(env: NodeJS.ProcessEnv, recent: boolean, file: { path: string; bytes: number; sha256: string; usage: UsageSample }): Promise<PublicationView> {
  const known = await publications(env);
  const publication = untouchedPublication(known.found, file.path, file.bytes, file.sha256);
  // Only what gobstopper wrote at this very path is known not to be a client's write; a copy
  // elsewhere is known by its bytes, for the report they carry.
  const active = recent && publication === null;
  const copied = known.byContent.get(file.sha256);
  const compaction = publication?.compaction ?? (copied && stillAsPublished(copied, file.bytes, file.sha256) ? copied.compaction : null);
  if (!compaction || file.usage.context_state !== 'reported' || file.usage.context_reason != null) return { active, usage: file.usage, staleReport: null };
  const projection = countedProjection(compaction, file.usage.context_tokens);
  if (projection === null) return { active, usage: { ...file.usage, context_reason: 'rewritten' }, staleReport: 'estimated' };
  return { active, usage: { ...file.usage, context_tokens: projection, context_components: null }, staleReport: 'projected' };
}
