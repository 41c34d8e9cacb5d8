import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { admitBundle } from '../../../kernel/plugins/admission/admit.js';

const script = join(import.meta.dirname, '..', '..', '..', 'examples', 'plugins', 'rehash.mjs');

describe('examples/plugins/rehash.mjs <bundle-dir>', () => {
  it('pins a third-party bundle\'s files so that it is admitted, and names a directory without a manifest', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gob-rehash-'));
    try {
      writeFileSync(join(dir, 'main.mjs'), 'process.stdin.resume();\n');
      writeFileSync(join(dir, 'notes.txt'), 'mine\n');
      const manifest = { protocol_version: 1, id: 'mine', version: '1.0.0', provides: { strategies: ['mine'] }, runtime: 'node', executable: 'main.mjs', files: {}, engines: { gobstopper: '*' } };
      writeFileSync(join(dir, 'gobstopper-plugin.json'), JSON.stringify(manifest));
      const run = spawnSync(process.execPath, [script, dir], { encoding: 'utf8' });
      expect(run.status).toBe(0);
      expect(admitBundle(dir, { gobstopperVersion: '0.1.0' }).files.map((f) => f.path)).toEqual(['main.mjs', 'notes.txt']);
      const missing = spawnSync(process.execPath, [script, join(dir, 'nowhere')], { encoding: 'utf8' });
      expect(missing.status).toBe(1);
      expect(missing.stderr).toContain('has no gobstopper-plugin.json');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('examples/plugins/rehash.mjs on a bundle it cannot pin', () => {
  it('names a manifest that is not JSON, or not an object, and leaves it as it was', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gob-rehash-bad-'));
    try {
      writeFileSync(join(dir, 'main.py'), 'pass\n');
      for (const text of ['{"id": "mine",}\n', '[1]\n']) {
        writeFileSync(join(dir, 'gobstopper-plugin.json'), text);
        const run = spawnSync(process.execPath, [script, dir], { encoding: 'utf8' });
        expect(run.status).toBe(1);
        expect(run.stderr).toMatch(/^rehash: \S+gobstopper-plugin\.json is not (JSON \(.*\); fix it, then rehash|a JSON object; .*)\n$/);
        expect(run.stderr).not.toContain('    at ');
        expect(readFileSync(join(dir, 'gobstopper-plugin.json'), 'utf8')).toBe(text);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('pins no symbolic link, which admission refuses, and says so', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gob-rehash-link-'));
    try {
      writeFileSync(join(dir, 'main.py'), 'pass\n');
      mkdirSync(join(dir, 'lib'));
      symlinkSync(join('..', 'main.py'), join(dir, 'lib', 'again.py'));
      writeFileSync(join(dir, 'gobstopper-plugin.json'), '{}\n');
      const run = spawnSync(process.execPath, [script, dir], { encoding: 'utf8' });
      expect(run.status).toBe(1);
      expect(run.stderr).toContain('rehash: leaving out lib/again.py, a symbolic link, which plugin add refuses');
      expect(Object.keys(JSON.parse(readFileSync(join(dir, 'gobstopper-plugin.json'), 'utf8')).files)).toEqual(['main.py']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('examples/plugins/rehash.mjs with no arguments', () => {
  it('rehashes examples copied out of the repository, keeping their own SDK copy', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gob-rehash-copied-'));
    try {
      const examples = join(dir, 'a', 'b', 'plugins');
      cpSync(join(import.meta.dirname, '..', '..', '..', 'examples', 'plugins'), examples, { recursive: true });
      const bundle = join(examples, 'keep-last-python');
      writeFileSync(join(bundle, 'gobstopper_sdk.py'), '# my own copy\n');
      const run = spawnSync(process.execPath, [join(examples, 'rehash.mjs')], { encoding: 'utf8' });
      expect(run.stderr).toBe('');
      expect(run.status).toBe(0);
      expect(run.stdout).toContain('rehashed keep-last-python');
      expect(readFileSync(join(bundle, 'gobstopper_sdk.py'), 'utf8')).toBe('# my own copy\n');
      expect(admitBundle(bundle, { gobstopperVersion: '0.1.0' }).manifest.id).toBe('keep-last-python');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
