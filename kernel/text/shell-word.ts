/**
 * One argument as a shell reads it back, for commands printed to be pasted: bare when that is
 * safe, else single-quoted. A word holding control characters (an escape byte in a directory name,
 * a newline) is written in `$'…'` quoting instead, whose escapes bash and zsh read back as the same
 * characters: single quotes would carry the raw bytes to the terminal, and the terminal-safe
 * escaping of output would turn them into text no shell reads back.
 */
import { WIDE_CONTROLS } from './human.js';

const BARE = /^[A-Za-z0-9_./:=@%+-]+$/;
const CONTROLS = new RegExp(`[\\u0000-\\u001f${WIDE_CONTROLS}]`);
const ANSI_C_SPECIAL = new RegExp(`[\\\\'\\u0000-\\u001f${WIDE_CONTROLS}]`, 'g');

export function shellWord(word: string): string {
  if (BARE.test(word)) return word;
  if (!CONTROLS.test(word)) return `'${word.replace(/'/g, `'\\''`)}'`;
  return `$'${word.replace(ANSI_C_SPECIAL, ansiCEscape)}'`;
}

// Each byte of the character's UTF-8 as \xHH: read back the same whatever the shell's locale, where
// a \u escape needs a UTF-8 one.
function ansiCEscape(c: string): string {
  if (c === '\\' || c === "'") return `\\${c}`;
  return [...Buffer.from(c, 'utf8')].map((byte) => `\\x${byte.toString(16).padStart(2, '0')}`).join('');
}
