/**
 * The elidable payload of a Claude record: the text a `tool_result` block carries back to the model
 * (dialects.md §0 and §1.8). A payload is a string, or an array made only of `text` blocks; an array
 * with an image or any other block is left alone. Only payloads over 256 bytes are worth a stub.
 */
import { blockType, content, isObject, type Block, type RawRecord } from './records.js';

/** A payload must be longer than this to be elided: a stub costs about as much. */
export const ELIGIBLE_MIN_EXCLUSIVE_BYTES = 256;

/** What eliding a part needs to know of it: where it sits, its size, and which of its blocks are empty. */
export interface PartShape {
  /** Index of the tool_result block in `message.content`. */
  blockIndex: number;
  /** UTF-8 bytes of the payload text. */
  bytes: number;
  /** 'string' when `content` is a string, else the number of text blocks in the array. */
  shape: 'string' | number;
  /** Per text block of an array payload, whether its text is empty (an empty one stays as it is). */
  emptyTexts: readonly boolean[];
}

export interface PayloadPart extends PartShape {
  texts: string[];
}

const NO_BLOCKS: readonly boolean[] = [];

/** The shape of a part whose payload is one plain string of `bytes` UTF-8 bytes at `blockIndex`. */
export function stringPartShape(blockIndex: number, bytes: number): PartShape {
  return { blockIndex, bytes, shape: 'string', emptyTexts: NO_BLOCKS };
}

/** The part without its text, to be kept after the record it came from is gone. */
export function shapeOf(part: PartShape): PartShape {
  return { blockIndex: part.blockIndex, bytes: part.bytes, shape: part.shape, emptyTexts: part.emptyTexts };
}

/** The text of one tool_result block's `content`, or null when it is not plain text. */
function payloadTexts(value: unknown): { texts: string[]; shape: 'string' | number } | null {
  if (typeof value === 'string') return { texts: [value], shape: 'string' };
  if (!Array.isArray(value) || value.length === 0) return null;
  const texts: string[] = [];
  for (const b of value) {
    if (!isObject(b)) return null;
    const block: Block = b;
    if (block.type !== 'text' || typeof block.text !== 'string') return null;
    texts.push(block.text);
  }
  return { texts, shape: texts.length };
}

function textBytes(texts: string[]): number {
  let n = 0;
  for (const t of texts) n += Buffer.byteLength(t, 'utf8');
  return n;
}

export interface ResultPayloads {
  /** Parts worth eliding, in block order. */
  parts: PayloadPart[];
  /** UTF-8 bytes of every plain-text tool result in the record, elidable or not. */
  textBytes: number;
}

/** Measures the tool_result payloads of a `user` record in one pass. */
export function resultPayloads(r: RawRecord): ResultPayloads {
  const out: ResultPayloads = { parts: [], textBytes: 0 };
  if (r.type !== 'user') return out;
  const raw = content(r);
  if (!Array.isArray(raw)) return out;
  for (let i = 0; i < raw.length; i += 1) {
    const b = raw[i];
    if (!isObject(b) || blockType(b) !== 'tool_result') continue;
    const p = payloadTexts(b.content);
    if (!p) continue;
    const bytes = textBytes(p.texts);
    out.textBytes += bytes;
    if (bytes > ELIGIBLE_MIN_EXCLUSIVE_BYTES) {
      const emptyTexts = p.shape === 'string' ? NO_BLOCKS : p.texts.map((t) => t === '');
      out.parts.push({ blockIndex: i, bytes, shape: p.shape, texts: p.texts, emptyTexts });
    }
  }
  return out;
}

/** The eligible payload parts of a `user` record, in block order. */
export function eligibleParts(r: RawRecord): PayloadPart[] {
  return resultPayloads(r).parts;
}

/** `{bytes}` and `{kind}` substituted into a stub template. */
export function stubText(template: string, bytes: number): string {
  return template.replaceAll('{bytes}', String(bytes)).replaceAll('{kind}', 'tool_result');
}

export interface PartRewrite {
  /** JSON path of the value to replace, from the record's root. */
  path: (string | number)[];
  value: string;
}

/**
 * The value replacements that elide one part: a string payload becomes the stub; an array of text
 * blocks keeps its blocks, the first text becomes the stub and the others empty. Returns none when
 * the stub would not be shorter than the text it replaces.
 */
export function partRewrites(part: PartShape, stub: string): PartRewrite[] {
  if (Buffer.byteLength(stub, 'utf8') >= part.bytes) return [];
  const base = ['message', 'content', part.blockIndex, 'content'];
  if (part.shape === 'string') return [{ path: base, value: stub }];
  const out: PartRewrite[] = [{ path: [...base, 0, 'text'], value: stub }];
  for (let j = 1; j < part.shape; j += 1) if (!part.emptyTexts[j]) out.push({ path: [...base, j, 'text'], value: '' });
  return out;
}
