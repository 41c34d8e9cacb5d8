/**
 * The worker side of a parallel render: one byte range of the source rendered into memory, its
 * rows handed over in batches as a scanned range's are (range-scan.ts), so the main thread joins
 * them into the one table the whole render is checked against. Elide targets are file lines, so
 * a worker with targets first counts the lines before its range; the whole-file read later confirms
 * the count.
 */
import { closeSync, constants as fsConstants, openSync, readSync } from 'node:fs';
import { MemorySink } from './record-sink.js';
import { LineRenderer } from './render-lines.js';
import type { ElideTarget } from './render-plan.js';
import { scanRange, type RangeBatch, type RangeEnd, type RangeTask } from './range-scan.js';

export interface RenderRangeTask extends RangeTask {
  elide: Array<[number, ElideTarget]>;
  newSessionId: string | null;
}

export interface RenderedRange {
  end: RangeEnd;
  /**
   * File line of the range's first line, as counted by this worker; null when it had no elide
   * targets, so no line number mattered (the whole-file read still checks where the range starts).
   */
  firstLine: number | null;
  elided: number;
  /** The range's output, one record per line read, every line followed by a newline. */
  output: Uint8Array[];
}

const CHUNK = 1024 * 1024;

/** Newlines in the first `end` bytes of `path`: the file line that starts at `end`. */
function linesBefore(path: string, end: number): number {
  const fd = openSync(path, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW);
  const chunk = Buffer.allocUnsafe(Math.min(CHUNK, Math.max(1, end)));
  let lines = 0;
  try {
    for (let at = 0; at < end; ) {
      const got = readSync(fd, chunk, 0, Math.min(chunk.length, end - at), at);
      if (got === 0) break;
      for (let nl = chunk.indexOf(0x0a); nl !== -1 && nl < got; nl = chunk.indexOf(0x0a, nl + 1)) lines += 1;
      at += got;
    }
  } finally {
    closeSync(fd);
  }
  return lines;
}

export function renderRange(task: RenderRangeTask, post: (batch: RangeBatch) => void): RenderedRange {
  const firstLine = task.elide.length > 0 ? linesBefore(task.path, task.start) : null;
  const targets = { elide: new Map(task.elide), newSessionId: task.newSessionId };
  const sink = new MemorySink();
  let renderer: LineRenderer | null = null;
  const end = scanRange(task, post, (state) => {
    const r = (renderer = new LineRenderer(targets, task.limits, state));
    return (bytes, index) => r.render(bytes, index, (firstLine ?? 0) + index, sink, true);
  });
  return { end, firstLine, elided: renderer!.elided, output: sink.take() };
}
