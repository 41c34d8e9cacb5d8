/**
 * JSON.parse keeps the last of two members with one name, so a manifest naming `id` twice would be
 * one bundle to gobstopper and possibly another to whoever reviewed the first `id`, or to another
 * parser. No dependency reports repeated names, so the text is scanned here.
 */
import { pointerToken } from './rules.js';

export interface DuplicateKey {
  /** The member name as JSON.parse decodes it (`"\u0069d"` and `"id"` are one name). */
  key: string;
  /** RFC 6901 pointer of the repeated member. */
  pointer: string;
}

interface ObjectFrame {
  kind: 'object';
  pointer: string;
  names: Set<string>;
  /** The name of the member whose value comes next, once its key is read. */
  current: string | null;
  expectingKey: boolean;
}

interface ArrayFrame {
  kind: 'array';
  pointer: string;
  index: number;
}

/**
 * The first member name repeated within one object, in document order; null when there is none.
 * `text` must be JSON that JSON.parse accepted: syntax is not checked again. The scan keeps its own
 * stack instead of recursing, so deep nesting within the manifest size cap cannot overflow.
 */
export function firstDuplicateKey(text: string): DuplicateKey | null {
  const stack: Array<ObjectFrame | ArrayFrame> = [];
  const childPointer = (): string => {
    const top = stack[stack.length - 1];
    if (!top) return '';
    return top.kind === 'array' ? `${top.pointer}/${top.index}` : `${top.pointer}/${pointerToken(top.current ?? '')}`;
  };
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (char === '"') {
      const end = stringEnd(text, i);
      const top = stack[stack.length - 1];
      if (top?.kind === 'object' && top.expectingKey) {
        const key = JSON.parse(text.slice(i, end + 1)) as string;
        const pointer = `${top.pointer}/${pointerToken(key)}`;
        if (top.names.has(key)) return { key, pointer };
        top.names.add(key);
        top.current = key;
        top.expectingKey = false;
      }
      i = end;
    } else if (char === '{') {
      stack.push({ kind: 'object', pointer: childPointer(), names: new Set(), current: null, expectingKey: true });
    } else if (char === '[') {
      stack.push({ kind: 'array', pointer: childPointer(), index: 0 });
    } else if (char === '}' || char === ']') {
      stack.pop();
    } else if (char === ',') {
      const top = stack[stack.length - 1];
      if (top?.kind === 'object') top.expectingKey = true;
      else if (top?.kind === 'array') top.index += 1;
    }
    // Anything else outside a string is whitespace, ':' or part of a number or literal.
  }
  return null;
}

/** Index of the quote closing the string that opens at `start`; a backslash escapes the next character. */
function stringEnd(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    if (text[i] === '\\') i += 1;
    else if (text[i] === '"') return i;
  }
  return text.length - 1;
}
