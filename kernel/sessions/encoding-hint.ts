/**
 * Why no provider may have recognised a file, when its first bytes show it: the sessions every
 * client writes are UTF-8 JSON lines ending in `\n` (or `\r\n`), without a byte-order mark. An
 * editor or a copy through another system can change that, and "not a transcript" alone does not
 * say what to fix.
 */
import { readPrefix } from '../../sdk/jsonl.js';

const HEAD_BYTES = 4096;

/**
 * What is off about the head of a file that should hold JSON lines, or null when nothing shows.
 * `cut`: the file goes on after `head` (a read that filled its buffer).
 */
export function encodingHint(head: Buffer, cut = head.length >= HEAD_BYTES): string | null {
  if (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) return 'it begins with a UTF-8 byte-order mark, which no client writes (remove its first 3 bytes)';
  if ((head[0] === 0xff && head[1] === 0xfe && head[2] === 0 && head[3] === 0) || (head[0] === 0 && head[1] === 0 && head[2] === 0xfe && head[3] === 0xff)) {
    return 'it is UTF-32 text; the clients write UTF-8';
  }
  if ((head[0] === 0xff && head[1] === 0xfe) || (head[0] === 0xfe && head[1] === 0xff)) return 'it is UTF-16 text; the clients write UTF-8';
  // Without a mark, ASCII JSON has three NULs in every four bytes in UTF-32 and one in every two
  // in UTF-16, always at the same places.
  if (nulsAtFixedPlaces(head.subarray(0, 64), 4, 3)) return 'it looks like UTF-32 text; the clients write UTF-8';
  if (nulsAtFixedPlaces(head.subarray(0, 64), 2, 1)) return 'it looks like UTF-16 text; the clients write UTF-8';
  // A read that stops between a \r and its \n has not shown the line's end yet.
  const seen = cut && head[head.length - 1] === 0x0d ? head.subarray(0, head.length - 1) : head;
  if (!seen.includes(0x0a) && seen.includes(0x0d)) return 'its lines end in a bare carriage return; the clients end them in \\n';
  return null;
}

/**
 * Whether, in every group of `width` bytes, the NULs fall on the same `nulsPerGroup` places (a
 * character stored in `width` bytes whose high bytes are zero), and only there.
 */
function nulsAtFixedPlaces(sample: Buffer, width: number, nulsPerGroup: number): boolean {
  const groups = Math.floor(sample.length / width);
  if (groups < 4) return false;
  const nuls = new Array<number>(width).fill(0);
  for (let i = 0; i < groups * width; i += 1) if (sample[i] === 0) nuls[i % width]! += 1;
  // A NUL place may miss its NUL in one group (a character past U+00FF); a text place never holds one.
  const full = nuls.filter((n) => n >= groups - 1).length;
  const empty = nuls.filter((n) => n === 0).length;
  return full === nulsPerGroup && empty === width - nulsPerGroup;
}

/** encodingHint of the file at `path` (opened without following a link); null when unreadable. */
export function encodingHintOf(path: string): string | null {
  try {
    return encodingHint(readPrefix(path, HEAD_BYTES));
  } catch {
    return null;
  }
}
