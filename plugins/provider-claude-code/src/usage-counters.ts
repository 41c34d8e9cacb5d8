/**
 * Lifetime counters from a tail window without parsing its records: each assistant `usage` object
 * is found by its bytes and only its input counters are read. Discovery sizes a thousand sessions
 * this way; the numbers are a lower bound (the window is partial) and say so.
 *
 * Only an unescaped `"usage":{` can be a usage object (inside a JSON string every quote is
 * escaped), and only on a line whose role is assistant; split records of one response repeat the
 * same input counters, so consecutive identical counters are one response.
 */

const USAGE = Buffer.from('"usage"');
const ROLE_ASSISTANT = [Buffer.from('"role":"assistant"'), Buffer.from('"role": "assistant"')];

export interface UsageCounters {
  input: number;
  cached: number;
  responses: number;
}

function skipSpace(buf: Buffer, i: number): number {
  while (i < buf.length && (buf[i] === 0x20 || buf[i] === 0x09)) i += 1;
  return i;
}

/** Index just past the object opening at `i`, or -1 when it does not close in the buffer. */
function objectEnd(buf: Buffer, i: number): number {
  let depth = 0;
  let inString = false;
  for (let j = i; j < buf.length; j += 1) {
    const c = buf[j]!;
    if (inString) {
      if (c === 0x5c) j += 1;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b) depth += 1;
    else if (c === 0x7d) {
      depth -= 1;
      if (depth === 0) return j + 1;
    } else if (c === 0x0a) return -1;
  }
  return -1;
}

/** The integer after `"key":` inside [from, to), or -1. */
function counter(buf: Buffer, key: Buffer, from: number, to: number): number {
  const rel = buf.subarray(from, to).indexOf(key);
  if (rel === -1) return -1;
  const at = from + rel;
  let i = skipSpace(buf, at + key.length);
  if (buf[i] !== 0x3a) return -1;
  i = skipSpace(buf, i + 1);
  let n = 0;
  let digits = 0;
  while (i < to && buf[i]! >= 0x30 && buf[i]! <= 0x39) {
    n = n * 10 + (buf[i]! - 0x30);
    i += 1;
    digits += 1;
  }
  return digits > 0 && digits <= 15 ? n : -1;
}

const INPUT = Buffer.from('"input_tokens"');
const CACHE_READ = Buffer.from('"cache_read_input_tokens"');
const CACHE_CREATION = Buffer.from('"cache_creation_input_tokens"');

function lineBounds(buf: Buffer, at: number): [number, number] {
  const start = buf.lastIndexOf(0x0a, at) + 1;
  const nl = buf.indexOf(0x0a, at);
  return [start, nl === -1 ? buf.length : nl];
}

function isAssistantLine(buf: Buffer, start: number, end: number): boolean {
  // Searches stay inside the line: an absent needle must not scan the rest of the window.
  const line = buf.subarray(start, end);
  return ROLE_ASSISTANT.some((needle) => line.indexOf(needle) !== -1);
}

export function usageCounters(buf: Buffer, from = 0): UsageCounters {
  const out: UsageCounters = { input: 0, cached: 0, responses: 0 };
  let last = '';
  let at = buf.indexOf(USAGE, from);
  while (at !== -1) {
    let i = skipSpace(buf, at + USAGE.length);
    if (buf[i] === 0x3a) {
      i = skipSpace(buf, i + 1);
      if (buf[i] === 0x7b) {
        const end = objectEnd(buf, i);
        const [lineStart, lineEnd] = lineBounds(buf, at);
        if (end !== -1 && isAssistantLine(buf, lineStart, lineEnd)) {
          const input = counter(buf, INPUT, i, end);
          const read = Math.max(0, counter(buf, CACHE_READ, i, end));
          const creation = Math.max(0, counter(buf, CACHE_CREATION, i, end));
          const key = `${input}/${read}/${creation}`;
          if (input >= 0 && key !== last) {
            out.input += input + read + creation;
            out.cached += read;
            out.responses += 1;
          }
          last = key;
        }
      }
    }
    at = buf.indexOf(USAGE, at + USAGE.length);
  }
  return out;
}
