/** provider/parse: the normalized transcript of one rollout, bound to the hash of the bytes read. */
import { basename } from 'node:path';
import { digestOffThread } from '../../../sdk/file-digest.js';
import { invalidInput, sourceChanged, type ProviderParseParams, type SessionHandle, type Transcript } from '../../../sdk/index.js';
import { missingSessionMetaMessage, unreadableSessionMetaMessage } from './missing-meta.js';
import { NOT_A_ROLLOUT, isRollout } from './not-rollout.js';
import { PROVIDER_ID } from './provider-id.js';
import { parseRolloutName } from './rollout-name.js';
import { scanRollout, type ScanResult } from './scan.js';
import { absolutePath, readStable, resolveLimits, toPluginError } from './source.js';

export interface ScannedSource {
  scan: ScanResult;
  session: SessionHandle;
}

type ReadLimits = { max_bytes?: number; max_records?: number };

/** Scans a rollout, refusing files that are not Codex rollouts at all. */
export async function scanSource(path: string, limits: ReadLimits): Promise<ScannedSource> {
  try {
    const scanned = await scanSourceAsRead(path, limits, true);
    if (!isRollout(scanned.scan)) throw invalidInput(`${scanned.session.path} is not ${NOT_A_ROLLOUT}`);
    return scanned;
  } catch (error) {
    throw toPluginError(error, absolutePath(path));
  }
}

/**
 * scanSource, except that what the reader refuses (NUL bytes, a limit) is thrown as the reader's
 * own error and a file that is no rollout is scanned all the same: verify reports both as findings.
 * `detail: false` (verify) collects findings without building items.
 */
export async function scanSourceAsRead(path: string, limits: ReadLimits, detail: boolean): Promise<ScannedSource> {
  const abs = absolutePath(path);
  const { result: scan, stat } = await readStable(abs, (before) => scanAndDigest(abs, before.size, resolveLimits(limits), detail), (r) => r.summary.bytes);
  const first = scan.identity.first;
  const session: SessionHandle = {
    provider: PROVIDER_ID,
    session_id: first?.id ?? parseRolloutName(abs)?.id ?? basename(abs, '.jsonl'),
    path: abs,
    cwd: first?.cwd ?? null,
    kind: scan.identity.kind(),
    bytes: stat.size,
    mtime_ms: stat.mtimeMs,
  };
  return { scan, session };
}

/** A worker thread's start costs more than hashing a file smaller than this on the reading one. */
const OFF_THREAD_DIGEST_BYTES = 16 * 1024 * 1024;

/**
 * scanRollout, with the file's sha256 when `detail` (a parse) and none for a verify, which reads
 * nothing that needs it. A large file is hashed on a worker while this thread parses it; readStable
 * binds the two reads (the same file, size and mtime before and after both) and the byte counts
 * must agree.
 */
async function scanAndDigest(path: string, size: number, limits: ReturnType<typeof resolveLimits>, detail: boolean): Promise<ScanResult> {
  if (!detail || size < OFF_THREAD_DIGEST_BYTES) return scanRollout(path, { ...limits, hash: detail }, detail);
  const digest = digestOffThread(path);
  let scan: ScanResult;
  try {
    scan = await scanRollout(path, { ...limits, hash: false }, detail);
  } catch (error) {
    digest.cancel();
    digest.done.catch(() => undefined);
    throw error;
  }
  const file = await digest.done;
  if (file.bytes !== scan.summary.bytes) throw sourceChanged(`${path} changed while it was read`);
  return { ...scan, summary: { ...scan.summary, sha256: file.sha256 } };
}

/**
 * A rollout without a session_meta record names no thread: codex cannot resume it, and a fork has
 * no record to carry its new id. Planning it would end in a render that cannot be published, so it
 * is refused here, where the reason is known.
 */
function requireSessionMeta(scanned: ScannedSource): void {
  const identity = scanned.scan.identity;
  if (identity.first === null) throw invalidInput(missingSessionMetaMessage(scanned.session.path));
  if (identity.firstUnreadable !== null) throw invalidInput(unreadableSessionMetaMessage(scanned.session.path, identity.firstUnreadable));
}

export async function parse(params: ProviderParseParams): Promise<Transcript> {
  const scanned = await scanSource(params.path, params);
  const { scan, session } = scanned;
  if (params.expected_sha256 && params.expected_sha256 !== scan.summary.sha256) {
    throw sourceChanged(`${session.path} no longer has the expected sha256`);
  }
  requireSessionMeta(scanned);
  return {
    session,
    items: scan.items,
    usage: scan.usage,
    source_sha256: scan.summary.sha256,
    bytes: scan.summary.bytes,
    record_count: scan.summary.recordCount,
    record_types: scan.recordTypes,
    findings: scan.findings,
    // verify runs the same scanner over the same bytes (without items): its findings are these.
    findings_complete: true,
  };
}
