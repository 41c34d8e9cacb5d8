import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');

describe('generated files stay in sync with their sources', () => {
  it('types and validators match schemas/v1 (npm run gen -- --check)', () => {
    const out = execFileSync(process.execPath, ['scripts/gen.mjs', '--check'], { cwd: root, encoding: 'utf8' });
    expect(out).toContain('up to date');
  });

  it('oclif.manifest.json matches the compiled commands', () => {
    const out = execFileSync(process.execPath, ['scripts/oclif-manifest.mjs', '--check'], { cwd: root, encoding: 'utf8' });
    expect(out).toContain('up to date');
  });

  it('docs/commands.md is what the commands\' --help prints', () => {
    const out = execFileSync(process.execPath, ['scripts/command-reference.mjs', '--check'], { cwd: root, encoding: 'utf8' });
    expect(out).toContain('up to date');
  });

  const pluginNames = readdirSync(join(root, 'plugins')).filter((n) => existsSync(join(root, 'plugins', n, 'gobstopper-plugin.json')));
  it.each(pluginNames)('plugins/%s pins the bundle that was built', (name) => {
    const committed = readFileSync(join(root, 'plugins', name, 'gobstopper-plugin.json'), 'utf8');
    const built = readFileSync(join(root, 'dist', 'plugins', name, 'gobstopper-plugin.json'), 'utf8');
    expect(committed, `run npm run build to refresh the pins of plugins/${name}`).toBe(built);
  });
});
