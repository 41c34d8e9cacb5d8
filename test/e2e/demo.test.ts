/**
 * `npm run demo` is a new user's first look: each `$ gobstopper …` line must be followed by what that
 * command prints, and `--keep` must leave a home the printed line can run commands in.
 */
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
let kept: string | undefined;
afterEach(() => {
  if (kept) rmSync(kept, { recursive: true, force: true });
  kept = undefined;
});

function runDemo(args: string[]): string {
  return execFileSync(process.execPath, [join(root, 'scripts', 'demo.mjs'), ...args], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } });
}

describe('npm run demo', () => {
  it("shows apply's own output under its command line, and --keep prints a line that runs commands in the kept home", { timeout: 180_000 }, () => {
    const out = runDemo(['--keep']);
    kept = /^The demo home is kept at (\S+);/m.exec(out)?.[1];
    expect(kept).toBeDefined();

    const applyBlock = out.slice(out.indexOf('$ gobstopper apply '), out.indexOf('== 4.'));
    expect(applyBlock).toMatch(/^strategy compacted: context /m);
    expect(applyBlock).toMatch(/^resume the new session: claude --resume \S+\.jsonl$/m);

    const line = out.trimEnd().split('\n').at(-1)!;
    expect(line).toMatch(/^env HOME=\S+ .* vault$/);
    const vault = execFileSync('sh', ['-c', line], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } });
    expect(vault).toContain('7d3f1c2a-8b4e-4f6a-9c1d-2e5b7a9c0d11');
    expect(vault).toMatch(/^2 snapshot\(s\)/m);
  });
});
