/**
 * What a tool call acted on, for its summary and its output's: "exec_command cmd=npm test",
 * "apply_patch Update File: src/a.ts". A state card keeps these of the calls it elides, so they
 * name the command or file rather than the argument names. Summaries may carry payload text;
 * labels never do.
 */
import { firstLine } from '../../../sdk/summary-lines.js';
import { clipUtf8 } from '../../../sdk/utf8.js';
import { isObject, type JsonObject } from './records.js';
import { SUMMARY_MAX_BYTES, sanitizeLabel } from './text.js';

/** Argument keys that say what a call acted on, in the order a reader would look for them. */
const SHAPE_KEYS = ['cmd', 'command', 'file_path', 'path', 'pattern', 'query', 'url', 'description', 'prompt'];
/** One argument inside a summary: a command line or a path. */
const ARGUMENT_BYTES = 160;
/** Argument objects larger than this are summarised by size alone, to keep the pass linear. */
const MAX_ARGUMENTS_BYTES = 64 * 1024;
/** How far into a patch its first file header is looked for. */
const PATCH_HEAD_CHARS = 4096;
const PATCH_FILE = /^\*\*\* (Add|Update|Delete) File: (.+)$/m;

/** A string argument, or a command given as an argv array, as one bounded line. */
function argumentText(value: unknown): string | null {
  if (typeof value === 'string') return firstLine(value, ARGUMENT_BYTES);
  if (Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === 'string')) return firstLine(value.join(' '), ARGUMENT_BYTES);
  return null;
}

function objectShape(name: string, value: JsonObject): string {
  for (const key of SHAPE_KEYS) {
    const text = argumentText(value[key]);
    if (text !== null) return `${name} ${key}=${text}`;
  }
  return `${name}(${Object.keys(value).map((k) => sanitizeLabel(k, '?')).join(', ')})`;
}

/** A function call's arguments arrive as a JSON string; anything unreadable is described by size. */
function argumentsShape(name: string, args: unknown): string {
  let value: unknown = args;
  if (typeof args === 'string') {
    if (args.length > MAX_ARGUMENTS_BYTES) return `${name}(${args.length} chars)`;
    try {
      value = JSON.parse(args);
    } catch {
      return `${name}(${args.length} chars)`;
    }
  }
  if (isObject(value)) return objectShape(name, value);
  if (Array.isArray(value)) return `${name}(${value.length} items)`;
  return value === null || value === undefined ? `${name}()` : `${name}(${typeof value})`;
}

/** A custom call's free-form input; a patch is named by the first file it touches. */
function inputShape(name: string, input: unknown): string {
  const text = typeof input === 'string' ? input : '';
  const file = PATCH_FILE.exec(text.slice(0, PATCH_HEAD_CHARS));
  if (file !== null) {
    const path = firstLine(file[2]!, ARGUMENT_BYTES);
    if (path !== null) return `${name} ${file[1]} File: ${path}`;
  }
  return `${name}(${text.length} chars)`;
}

export function callShape(name: string, payload: JsonObject, payloadType: string): string {
  let shape: string;
  if (payloadType === 'custom_tool_call') shape = inputShape(name, payload.input);
  else if (payloadType === 'local_shell_call') shape = isObject(payload.action) ? objectShape(name, payload.action) : `${name}()`;
  else shape = argumentsShape(name, payload.arguments);
  return clipUtf8(shape, SUMMARY_MAX_BYTES);
}
