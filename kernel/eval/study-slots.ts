/**
 * Text slots: the strings of live records that reach the model, each with the JSON pointer where it
 * sits in its record and who said it (its origin). The retention study binds spans to slots and
 * looks for them in slots after a compaction.
 *
 * The default extractor reads the chat-message shape the supported transcript formats share: an
 * object with a `role` (system, developer, user, assistant, tool) and a `content` that is a string
 * or a list of blocks (`text`/`input_text`/`output_text` blocks carry the role's text, `tool_result`
 * blocks carry tool output), wherever it sits in the record, plus `function_call_output` /
 * `custom_tool_call_output` items whose `output` is tool text. A provider with another shape can
 * pass its own extractor. Texts are read as their UTF-8 bytes decode, the form manifest spans and
 * hashes are cut from.
 */
import type { TranscriptItem } from '../../schemas/generated/types.js';
import { asUtf8Decodes } from './study-text.js';

export type SlotOrigin = 'system' | 'developer' | 'user' | 'assistant' | 'tool';

export interface TextSlot {
  record: number;
  pointer: string;
  origin: SlotOrigin;
  text: string;
}

export type SlotExtractor = (record: unknown, recordIndex: number) => TextSlot[];

const ORIGINS: ReadonlySet<string> = new Set(['system', 'developer', 'user', 'assistant', 'tool']);
const TEXT_BLOCKS: ReadonlySet<string> = new Set(['text', 'input_text', 'output_text']);
const TOOL_OUTPUT_ITEMS: ReadonlySet<string> = new Set(['function_call_output', 'custom_tool_call_output']);
/** Message shapes sit near the top of a record; deeper walks only cost time. */
const MAX_DEPTH = 6;

/** RFC 6901 escaping of one reference token. */
export const pointerToken = (key: string | number) => String(key).replace(/~/g, '~0').replace(/\//g, '~1');

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function contentSlots(value: unknown, pointer: string, origin: SlotOrigin, record: number, out: TextSlot[]): void {
  if (typeof value === 'string') {
    out.push({ record, pointer, origin, text: asUtf8Decodes(value) });
    return;
  }
  if (!Array.isArray(value)) return;
  value.forEach((block, i) => {
    if (!isObject(block)) return;
    const type = block.type;
    const at = `${pointer}/${i}`;
    if (typeof type === 'string' && TEXT_BLOCKS.has(type) && 'text' in block) contentSlots(block.text, `${at}/text`, origin, record, out);
    else if (type === 'tool_result' && 'content' in block) contentSlots(block.content, `${at}/content`, 'tool', record, out);
  });
}

function walk(node: unknown, pointer: string, depth: number, record: number, out: TextSlot[]): void {
  if (depth > MAX_DEPTH) return;
  if (Array.isArray(node)) {
    node.forEach((child, i) => walk(child, `${pointer}/${i}`, depth + 1, record, out));
    return;
  }
  if (!isObject(node)) return;
  const role = node.role;
  if (typeof role === 'string' && ORIGINS.has(role) && 'content' in node) {
    contentSlots(node.content, `${pointer}/content`, role as SlotOrigin, record, out);
    return;
  }
  if (typeof node.type === 'string' && TOOL_OUTPUT_ITEMS.has(node.type) && 'output' in node) {
    contentSlots(node.output, `${pointer}/output`, 'tool', record, out);
    return;
  }
  for (const [key, child] of Object.entries(node)) {
    if (typeof child === 'object' && child !== null) walk(child, `${pointer}/${pointerToken(key)}`, depth + 1, record, out);
  }
}

export const messageShapeSlots: SlotExtractor = (record, recordIndex) => {
  const out: TextSlot[] = [];
  walk(record, '', 0, recordIndex, out);
  return out;
};

export class SlotSourceError extends Error {}

/** Every text slot of every live record (an item with est_tokens > 0), in source order. */
export function extractSlots(source: Buffer, items: readonly TranscriptItem[], extractor: SlotExtractor = messageShapeSlots): TextSlot[] {
  const live = new Set<number>();
  for (const item of items) if (item.est_tokens > 0) live.add(item.line_index);
  const out: TextSlot[] = [];
  let start = 0;
  let index = 0;
  while (start < source.length) {
    let end = source.indexOf(0x0a, start);
    if (end === -1) end = source.length;
    if (live.has(index)) {
      let record: unknown;
      try {
        record = JSON.parse(source.toString('utf8', start, end));
      } catch {
        throw new SlotSourceError(`live record ${index} is not valid JSON`);
      }
      for (const slot of extractor(record, index)) out.push(slot);
    }
    start = end + 1;
    index += 1;
  }
  return out;
}
