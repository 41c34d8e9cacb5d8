/**
 * Tool output payloads: how big the replaceable text is, and how a stub replaces it. Codex writes an
 * output either as a plain string (function outputs, and custom outputs before ~0.146) or as an
 * array of `input_text` blocks (newer custom outputs); both keep their shape when elided.
 */
import { createHash, hash } from 'node:crypto';
import { isObject, isTextBlock, type Json } from './records.js';
import { utf8Bytes } from './text.js';

/** Outputs at or under this many bytes are not worth a stub (the original's eligibility bound). */
export const MIN_ELIDABLE_BYTES = 256;

export interface OutputMeasure {
  /** UTF-8 bytes of every text part. */
  bytes: number;
  /** The text parts: one for a string output, one per block for an array. */
  parts: string[];
}

/**
 * Measures an output value. Returns null for shapes a stub cannot replace safely: anything but a
 * string or an array made only of text blocks (an image or unknown block makes the array opaque).
 */
export function measureOutput(output: Json | undefined): OutputMeasure | null {
  if (typeof output === 'string') return { bytes: utf8Bytes(output), parts: [output] };
  if (!Array.isArray(output) || output.length === 0) return null;
  let bytes = 0;
  const parts: string[] = [];
  for (const block of output) {
    if (!isTextBlock(block)) return null;
    bytes += utf8Bytes(block.text);
    parts.push(block.text);
  }
  return { bytes, parts };
}

/** sha256 of the text parts joined by newlines, without building the joined string. */
export function payloadSha256(measure: OutputMeasure): string {
  if (measure.parts.length === 1) return hash('sha256', measure.parts[0]!, 'hex');
  const h = createHash('sha256');
  measure.parts.forEach((part, i) => {
    if (i > 0) h.update('\n');
    h.update(part);
  });
  return h.digest('hex');
}

export function isEligible(measure: OutputMeasure | null): measure is OutputMeasure {
  return measure !== null && measure.bytes > MIN_ELIDABLE_BYTES;
}

/**
 * The output value with its text replaced by `stub(oldBytes)`, or null when the shape is not
 * replaceable or the stub would not make it smaller. An array keeps its blocks: the first text
 * block carries the stub and later ones become empty, so block count and order never change.
 */
export function elideOutput(output: Json | undefined, stub: (oldBytes: number) => string): Json | null {
  const measure = measureOutput(output);
  if (measure === null) return null;
  const text = stub(measure.bytes);
  if (utf8Bytes(text) >= measure.bytes) return null;
  if (typeof output === 'string') return withExitStatus(output, text, measure.bytes) ?? text;
  const blocks = output as Json[];
  return blocks.map((block, i) => (isObject(block) ? { ...block, text: i === 0 ? text : '' } : block));
}

/** How older builds wrote a shell call's output: its text and how the command ended, as one JSON string. */
export const ENCODED_OUTPUT_START = '{"output":';

/**
 * An older build's `{"output": …, "metadata": {exit_code, duration_seconds}}` string with only its
 * text replaced: whether the command failed is what the next turn most often needs of an output it
 * can no longer see, and it costs a few bytes. Null for any other string, and when keeping the
 * metadata would not leave the output smaller.
 */
function withExitStatus(output: string, text: string, oldBytes: number): string | null {
  if (!output.startsWith(ENCODED_OUTPUT_START)) return null;
  let decoded: unknown;
  try {
    decoded = JSON.parse(output);
  } catch {
    return null;
  }
  if (!isObject(decoded) || typeof decoded.output !== 'string' || !isObject(decoded.metadata) || Object.keys(decoded).length !== 2) return null;
  const kept = JSON.stringify({ output: text, metadata: decoded.metadata });
  return utf8Bytes(kept) < oldBytes ? kept : null;
}
