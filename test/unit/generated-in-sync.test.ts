import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

describe('generated types and validators', () => {
  it('match schemas/v1 (npm run gen -- --check)', () => {
    const out = execFileSync(process.execPath, ['scripts/gen.mjs', '--check'], { encoding: 'utf8' });
    expect(out).toContain('up to date');
  });
});
