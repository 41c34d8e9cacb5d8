/**
 * The worker side of parallel scans and renders: a thread started from the provider's own bundle
 * with the marker below in its workerData reads the ranges it is sent (range-scan.ts) or renders
 * them (render-range.ts), posting each batch of rows as soon as it is read (its typed arrays moved,
 * not copied) and then how the range ended, and reads whole files for their hash and the reader's
 * verdict (whole-read.ts).
 */
import { isMainThread, parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { columnBuffers } from './record-table.js';
import { scanRange, type RangeBatch, type RangeEnd, type RangeTask } from './range-scan.js';
import { renderRange, type RenderedRange, type RenderRangeTask } from './render-range.js';
import { readWhole, type WholeRead, type WholeReadTask } from './whole-read.js';

/** workerData key that marks a thread as a scan worker. */
export const SCAN_WORKER = 'gobstopper_claude_scan_worker';

export type ScanRequest = { id: number; range: RangeTask } | { id: number; render: RenderRangeTask } | { id: number; whole: WholeReadTask };

export type ScanMessage =
  | { id: number; batch: RangeBatch }
  | { id: number; end: RangeEnd }
  | { id: number; rendered: RenderedRange }
  | { id: number; read: WholeRead }
  | { id: number; error: string };

/** This thread was started to read ranges, not to serve the plugin protocol. */
export function isScanWorker(): boolean {
  return !isMainThread && typeof workerData === 'object' && workerData !== null && (workerData as Record<string, unknown>)[SCAN_WORKER] === true;
}

export function serveScanWorker(): void {
  const port = parentPort!;
  // Tasks run one at a time in the order they came (a whole read may be queued behind a range).
  let queue = Promise.resolve();
  port.on('message', (request: ScanRequest) => {
    queue = queue.then(() => serve(port, request));
  });
}

async function serve(port: MessagePort, request: ScanRequest): Promise<void> {
  const { id } = request;
  const batch = (b: RangeBatch) => port.postMessage({ id, batch: b } satisfies ScanMessage, columnBuffers(b.table));
  let last: ScanMessage;
  let moved: ArrayBuffer[] = [];
  try {
    if ('range' in request) last = { id, end: scanRange(request.range, batch) };
    else if ('render' in request) {
      const rendered = renderRange(request.render, batch);
      last = { id, rendered };
      moved = rendered.output.map((chunk) => chunk.buffer as ArrayBuffer);
    } else last = { id, read: await readWhole(request.whole) };
  } catch (error) {
    // An I/O failure: the main thread reads the file itself and reports what it finds.
    last = { id, error: error instanceof Error ? error.message : String(error) };
  }
  port.postMessage(last, moved);
}
