/** Claude Code client versions as written on records (`2.1.39`, `1.0.98`). */

const VERSION = /^(\d+)\.(\d+)\.(\d+)(?:[-+][0-9A-Za-z.-]+)?$/;

export function isVersionString(value: string): boolean {
  return VERSION.test(value);
}
