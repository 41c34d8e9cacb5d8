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
import { vaultLayout } from '../vault/layout.js';
import { readEvents } from './events.js';
import { listReceipts } from './receipt.js';

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

/** Completed publications by canonical path. Best effort: an unreadable vault or log means none (or no projections) are known. */
export async function publications(env: NodeJS.ProcessEnv): Promise<Map<string, Publication>> {
  const receipts = (await listReceipts(vaultLayout(env)).catch(() => [] as OperationReceipt[])).filter((r) => r.completed);
  const found = new Map<string, Publication>();
  if (receipts.length === 0) return found;
  const events = (await readEvents({ env }).catch(() => ({ events: [] }))).events;
  const projected = new Map(events.filter((e) => e.outcome === 'applied' && e.snapshot_after_sha256).map((e) => [e.snapshot_after_sha256!, e.context_tokens_after]));
  const compactions = new Map(receipts.filter((r) => r.kind === 'compact').map((r) => [r.output_manifest_sha256, r]));
  for (const receipt of receipts) {
    // An undo that restored a fork's retained bytes republishes that compaction's output.
    const compact = receipt.kind === 'compact' ? receipt : receipt.kind === 'restore' ? compactions.get(receipt.snapshot_manifest_sha256) : undefined;
    const compaction = compact ? { receipt: compact, projectedContext: compact.context_tokens_after ?? projected.get(compact.output_manifest_sha256) ?? null } : null;
    found.set(canonical(receipt.path), { receipt, compaction });
  }
  return found;
}

/** The publication at `path` if the file is still exactly as published: its size, and its hash when known. */
export function untouchedPublication(found: Map<string, Publication>, path: string, bytes: number | null | undefined, sha256?: string): Publication | null {
  if (found.size === 0) return null;
  const publication = found.get(canonical(path));
  if (!publication || bytes !== publication.receipt.bytes_after) return null;
  return sha256 === undefined || sha256 === publication.receipt.output_sha256 ? publication : null;
}


/** What a parsed session is once gobstopper's own publications are told apart. */
export interface PublicationView {
  /** Updated within the live window by a client (a file gobstopper just wrote is not live). */
  active: boolean;
  /** The usage to count: a compaction's output nobody has resumed carries its source's last report. */
  usage: UsageSample;
  /** The usage's context is the compaction's projection, not a client's report. */
  projected: boolean;
}

export async function viewOfPublication(env: NodeJS.ProcessEnv, recent: boolean, file: { path: string; bytes: number; sha256: string; usage: UsageSample }): Promise<PublicationView> {
  const publication = untouchedPublication(await publications(env), file.path, file.bytes, file.sha256);
  const active = recent && publication === null;
  const compaction = publication?.compaction;
  if (!compaction || file.usage.context_state !== 'reported' || file.usage.context_reason != null) return { active, usage: file.usage, projected: false };
  // Without a kept projection (a receipt from before they were kept, and no events log) the report
  // is set aside and the records' own estimate counts.
  if (compaction.projectedContext === null) return { active, usage: { ...file.usage, context_reason: 'rewritten' }, projected: false };
  return { active, usage: { ...file.usage, context_tokens: compaction.projectedContext, context_components: null }, projected: true };
}
