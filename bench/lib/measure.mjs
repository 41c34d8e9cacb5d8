// What every benchmark file measures with: a clock, a median, and the two floors the targets are
// stated against (read + split + JSON.parse of every line; stat + a tail read).
import { closeSync, createReadStream, openSync, readSync, statSync } from 'node:fs';

export const MIB = 1024 * 1024;

export const nowMs = () => Number(process.hrtime.bigint()) / 1e6;

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** The parse floor: one process reading the file, splitting it into lines and JSON.parse-ing each. */
export async function readSplitParse(path) {
  let pending = [];
  for await (const chunk of createReadStream(path, { highWaterMark: MIB })) {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(0x0a, start);
      if (nl === -1) break;
      const piece = chunk.subarray(start, nl);
      const line = pending.length ? Buffer.concat([...pending, piece]) : piece;
      pending = [];
      JSON.parse(line.toString('utf8'));
      start = nl + 1;
    }
    if (start < chunk.length) pending.push(Buffer.from(chunk.subarray(start)));
  }
  if (pending.length) JSON.parse(Buffer.concat(pending).toString('utf8'));
}

/** The discovery floor: stat + a tail read of each file. */
export function statAndTail(files, tailBytes) {
  const buf = Buffer.allocUnsafe(tailBytes);
  for (const file of files) {
    const st = statSync(file);
    const fd = openSync(file, 'r');
    const n = Math.min(st.size, tailBytes);
    readSync(fd, buf, 0, n, st.size - n);
    closeSync(fd);
  }
}

/**
 * Times `floor` and `value` alternately, `runs` times, so both meet the same machine state, and
 * gives their medians. `before` runs untimed ahead of each pair (per-run setup); `check` gets
 * `value`'s answer, untimed, and throws when the code under test answered wrongly.
 */
export async function floorAndValue(runs, { before, floor, value, check }) {
  const floors = [];
  const values = [];
  for (let r = 0; r < runs; r++) {
    await before?.(r);
    let t = nowMs();
    await floor(r);
    floors.push(nowMs() - t);
    t = nowMs();
    const answer = await value(r);
    values.push(nowMs() - t);
    await check?.(answer, r);
  }
  return { value: median(values), floor: median(floors) };
}
