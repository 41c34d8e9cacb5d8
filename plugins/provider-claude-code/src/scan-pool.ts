/**
 * Whether a scan may use other threads, and how. Off until the bundle's entry point turns it on
 * with its own file (workers are started from it, see scan-worker.ts), so code imported from
 * sources reads on one thread.
 */
import type { Stats } from 'node:fs';
import { availableParallelism } from 'node:os';
import { MIB } from '../../../sdk/limits.js';
import { ScanPool } from './worker-pool.js';

export interface ParallelScanOptions {
  /** Files smaller than this are read on one thread: starting threads would cost more. Default 8 MiB. */
  minBytes?: number;
  /**
   * The same while the workers are new (just started, their code not yet optimized, which makes
   * them much slower): such a scan starts them and reads on one thread. Default 64 MiB.
   */
  coldMinBytes?: number;
  /** Threads reading one file, the calling one included. Default: the cores available, at most 4. */
  threads?: number;
  /** Share of the file's lines the calling thread parses itself; the rest is split evenly between the workers. */
  mainShare?: number;
  /** Rows a worker reads before it hands them over. Default 4096. */
  batchRows?: number;
}

export interface ParallelPlan {
  threads: number;
  mainShare: number;
  batchRows: number;
  pool: ScanPool;
}

const DEFAULT_MIN_BYTES = 8 * MIB;
const DEFAULT_COLD_MIN_BYTES = 64 * MIB;
/** Ranges parsed before the workers count as warmed up. */
const WARM_BYTES = 64 * MIB;
const DEFAULT_BATCH_ROWS = 4096;
const MAX_THREADS = 4;
/** Tuned on the parse of the 128 MiB benchmark session on two cores; renders use the same shares. */
const MAIN_EXTRA_SHARE = 0.02;
/** What the calling thread takes over from new workers, which start late and run slowly. */
const COLD_EXTRA_SHARE = 0.06;

interface Settings {
  minBytes: number;
  coldMinBytes: number;
  threads: number;
  mainShare: number | null;
  batchRows: number;
}

let settings: Settings | null = null;
let pool: ScanPool | null = null;
const counts = { parallel: 0, fallbacks: 0 };

/**
 * Lets large scans use worker threads started from `workerFile`: the provider's bundle, whose
 * entry point serves ranges instead of the protocol when started as a scan worker.
 */
export function enableParallelScan(workerFile: string, options: ParallelScanOptions = {}): void {
  const threads = Math.max(1, Math.floor(options.threads ?? Math.min(availableParallelism(), MAX_THREADS)));
  settings = {
    minBytes: options.minBytes ?? DEFAULT_MIN_BYTES,
    coldMinBytes: Math.max(options.minBytes ?? DEFAULT_MIN_BYTES, options.coldMinBytes ?? DEFAULT_COLD_MIN_BYTES),
    threads,
    mainShare: options.mainShare ?? null,
    batchRows: Math.max(1, Math.floor(options.batchRows ?? DEFAULT_BATCH_ROWS)),
  };
  const size = Math.max(1, threads - 1);
  if (!pool || pool.file !== workerFile || pool.size !== size || pool.broken) {
    pool?.close();
    pool = new ScanPool(workerFile, size);
  }
}

/** How the file stat-ed as `st` is read in parallel, or null when it is read on one thread. */
export function parallelPlan(st: Stats): ParallelPlan | null {
  if (!settings || !pool || pool.broken || settings.threads < 2 || !st.isFile() || st.size < settings.minBytes) return null;
  const cold = pool.parsedBytes < WARM_BYTES;
  if (cold && st.size < settings.coldMinBytes) {
    // Worth threads, but not new ones: start them for the scans to come.
    pool.start();
    return null;
  }
  // The calling thread also joins the rows, indexes them and goes on to use them while one worker
  // hashes the whole file, which takes a little longer: its share is a little over an even one.
  const even = 1 / settings.threads;
  const mainShare = settings.mainShare ?? Math.min(0.9, even + MAIN_EXTRA_SHARE + (cold ? COLD_EXTRA_SHARE : 0));
  return { threads: settings.threads, mainShare, batchRows: settings.batchRows, pool };
}

/**
 * A session of `bytes` was just identified, and a parse of it usually follows (plan, apply). When
 * that parse would use the workers even while they are new, start them now: a thread's start and
 * first code then overlap the host's remaining work instead of the parse. Discovery does not do
 * this: it lists sessions, most of which are never read.
 */
export function expectScanOf(bytes: number): void {
  if (settings && pool && !pool.broken && settings.threads >= 2 && bytes >= settings.coldMinBytes) pool.start();
}

/** Worker threads running now. */
export function startedScanWorkers(): number {
  return pool?.started ?? 0;
}

/** Reads (scans and renders) done in parallel, and those that fell back to one pass. */
export function parallelScanCounts(): { parallel: number; fallbacks: number } {
  return { ...counts };
}

export function countParallelScan(fellBack: boolean): void {
  if (fellBack) counts.fallbacks += 1;
  else counts.parallel += 1;
}
