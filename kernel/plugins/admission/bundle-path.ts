import { AdmissionError, MANIFEST_FILE, pointerToken } from './rules.js';

/**
 * Checks a bundle-relative path as written in the manifest: forward slashes only, normal
 * components only. Anything that could name a file outside the bundle is refused before any
 * file system call is made with it.
 */
export function checkBundlePath(path: string, bundle: string, pointer: string): void {
  const fail = (code: 'path_invalid' | 'path_escape', why: string) =>
    new AdmissionError(code, `bundle ${bundle}: ${describe(pointer)} "${printable(path)}" ${why}`, { bundle, pointer, file: path });
  if (path.length === 0) throw fail('path_invalid', 'is empty');
  if (path.includes('\\')) throw fail('path_invalid', 'contains a backslash; use forward slashes');
  if (/[\u0000-\u001f\u007f]/.test(path)) throw fail('path_invalid', 'contains a control character');
  if (path.startsWith('/') || /^[A-Za-z]:/.test(path)) throw fail('path_escape', 'is absolute; bundle paths are relative to the bundle root');
  const parts = path.split('/');
  if (parts.includes('..')) throw fail('path_escape', 'climbs out of the bundle with ..');
  if (parts.some((p) => p === '' || p === '.')) throw fail('path_invalid', 'has an empty or "." component');
  if (path === MANIFEST_FILE) throw fail('path_invalid', 'is the manifest itself, which cannot pin its own hash');
}

function describe(pointer: string): string {
  if (pointer === '/executable') return 'executable';
  return 'file';
}

function printable(path: string): string {
  return path.replace(/[\u0000-\u001f\u007f]/g, '?').slice(0, 200);
}

export function filePointer(path: string): string {
  return `/files/${pointerToken(path)}`;
}
