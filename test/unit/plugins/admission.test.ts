import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { admitBundle } from '../../../kernel/plugins/admission/admit.js';
import { AdmissionCodes, AdmissionError } from '../../../kernel/plugins/admission/rules.js';
import { fixturesDir, sha256, tempDir, writeBundle, type TempDir } from '../../fixtures/bundles/build-bundle.js';

interface Expected {
  ok?: true;
  code?: string;
  pointer?: string;
  file?: string;
  message_contains?: string;
}

const committedDir = join(fixturesDir, 'admission');
const committed = readdirSync(committedDir).sort();

function refusal(target: string): AdmissionError {
  try {
    admitBundle(target, { gobstopperVersion: '0.1.0' });
  } catch (error) {
    expect(error).toBeInstanceOf(AdmissionError);
    return error as AdmissionError;
  }
  throw new Error(`${target} was admitted`);
}

function expectRefusal(error: AdmissionError, expected: Expected): void {
  expect(error.code).toBe(expected.code);
  expect(error.exit).toBe(1);
  if (expected.pointer !== undefined) expect(error.details.pointer).toBe(expected.pointer);
  if (expected.file !== undefined) expect(error.details.file).toBe(expected.file);
  if (expected.message_contains) expect(error.message).toContain(expected.message_contains);
  expect(error.message.split('\n')).toHaveLength(1);
}

/** Rules whose fixture cannot be a committed file (links, FIFOs, sizes): built here, one per rule. */
const generated: { name: string; build(dir: string): string; expected: Expected }[] = [
  {
    name: 'manifest_too_large',
    build: (dir) => {
      writeBundle(dir, { files: { 'main.mjs': 'x' }, manifest: { description: 'd', $schema: 'x'.repeat(512) } });
      const manifest = JSON.parse(readFileSync(join(dir, 'gobstopper-plugin.json'), 'utf8'));
      writeFileSync(join(dir, 'gobstopper-plugin.json'), JSON.stringify(manifest, null, 2) + ' '.repeat(65 * 1024));
      return dir;
    },
    expected: { code: 'manifest_too_large', file: 'gobstopper-plugin.json' },
  },
  {
    name: 'symlink_refused (a link inside the bundle pointing out of it)',
    build: (dir) => {
      writeBundle(dir, { files: { 'main.mjs': 'x' } });
      symlinkSync('/etc/hostname', join(dir, 'escape.txt'));
      return dir;
    },
    expected: { code: 'symlink_refused', file: 'escape.txt' },
  },
  {
    name: 'symlink_refused (a declared file that is a link)',
    build: (dir) => {
      writeBundle(dir, { files: { 'main.mjs': 'x', 'real.mjs': 'y' }, manifest: { files: { 'main.mjs': sha256('x'), 'linked.mjs': sha256('y') } } });
      symlinkSync('real.mjs', join(dir, 'linked.mjs'));
      return dir;
    },
    expected: { code: 'symlink_refused', file: 'linked.mjs' },
  },
  {
    name: 'symlink_refused (the manifest is a link)',
    build: (dir) => {
      const real = writeBundle(join(dir, 'elsewhere'), { files: { 'main.mjs': 'x' } });
      mkdirSync(join(dir, 'bundle'));
      writeFileSync(join(dir, 'bundle', 'main.mjs'), 'x');
      symlinkSync(join(real, 'gobstopper-plugin.json'), join(dir, 'bundle', 'gobstopper-plugin.json'));
      return join(dir, 'bundle');
    },
    expected: { code: 'symlink_refused', file: 'gobstopper-plugin.json' },
  },
  {
    name: 'file_not_regular',
    build: (dir) => {
      writeBundle(dir, { files: { 'main.mjs': 'x' } });
      execFileSync('mkfifo', [join(dir, 'pipe')]);
      return dir;
    },
    expected: { code: 'file_not_regular', file: 'pipe' },
  },
  {
    name: 'file_not_regular (a declared path that is a directory)',
    build: (dir) => {
      writeBundle(dir, { files: { 'main.mjs': 'x' }, manifest: { files: { 'main.mjs': sha256('x'), lib: sha256('y') } } });
      mkdirSync(join(dir, 'lib'));
      return dir;
    },
    expected: { code: 'file_not_regular', file: 'lib', message_contains: 'is a directory' },
  },
  {
    name: 'manifest_bad_semver (too short for the schema)',
    build: (dir) => writeBundle(dir, { files: { 'main.mjs': 'x' }, manifest: { version: '1.0' } }),
    expected: { code: 'manifest_bad_semver', pointer: '/version', message_contains: 'version "1.0" is not a semantic version (like 1.2.3)' },
  },
  {
    name: 'file_undeclared (Python bytecode left by running the bundle by hand)',
    build: (dir) => {
      writeBundle(dir, { files: { 'main.py': 'x' }, manifest: { runtime: 'python3', executable: 'main.py' } });
      mkdirSync(join(dir, '__pycache__'));
      writeFileSync(join(dir, '__pycache__', 'main.cpython-311.pyc'), 'bytecode');
      return dir;
    },
    expected: { code: 'file_undeclared', file: '__pycache__/main.cpython-311.pyc', message_contains: 'delete the __pycache__ directory' },
  },
  {
    name: 'manifest_not_json (a trailing comma, placed by line and column)',
    build: (dir) => {
      writeBundle(dir, { files: { 'main.mjs': 'x' } });
      const path = join(dir, 'gobstopper-plugin.json');
      writeFileSync(path, readFileSync(path, 'utf8').trimEnd().replace(/\n}$/, ',\n}'));
      return dir;
    },
    expected: { code: 'manifest_not_json', message_contains: 'is not valid JSON: Expected double-quoted property name at line ' },
  },
  {
    name: 'manifest_bad_semver (build metadata, which does not order versions)',
    build: (dir) => writeBundle(dir, { files: { 'main.mjs': 'x' }, manifest: { version: '1.0.0+build.7' } }),
    expected: { code: 'manifest_bad_semver', pointer: '/version', message_contains: 'drop the +build.7' },
  },
  {
    name: 'file_not_executable (an exec bundle whose executable has no x bit)',
    build: (dir) => {
      writeBundle(dir, { files: { 'run.sh': '#!/bin/sh\n' }, manifest: { runtime: 'exec', executable: 'run.sh' } });
      chmodSync(join(dir, 'run.sh'), 0o644);
      return dir;
    },
    expected: { code: 'file_not_executable', file: 'run.sh', message_contains: 'mode 0644; chmod +x it' },
  },
  {
    name: 'too_many_entries',
    build: (dir) => {
      writeBundle(dir, { files: { 'main.mjs': 'x' } });
      for (let i = 0; i < 256; i++) mkdirSync(join(dir, `d${String(i).padStart(3, '0')}`));
      return dir;
    },
    expected: { code: 'too_many_entries' },
  },
  {
    name: 'bundle_too_large',
    build: (dir) => writeBundle(dir, { files: { 'main.mjs': 'x', 'weights.bin': Buffer.alloc(16 * 1024 * 1024) } }),
    expected: { code: 'bundle_too_large' },
  },
];

describe('manifest admission: one fixture per rule', () => {
  let temp: TempDir | undefined;
  afterEach(() => temp?.cleanup());

  for (const name of committed) {
    const expected = JSON.parse(readFileSync(join(committedDir, name, 'expected.json'), 'utf8')) as Expected;
    it(`${name} (test/fixtures/bundles/admission/${name})`, () => {
      const target = join(committedDir, name, 'bundle');
      if (expected.ok) {
        const admitted = admitBundle(target, { gobstopperVersion: '0.1.0' });
        expect(admitted.manifestSha256).toBe(sha256(readFileSync(join(target, 'gobstopper-plugin.json'))));
        expect(admitted.files.map((f) => f.path)).toEqual(['main.mjs']);
        return;
      }
      expectRefusal(refusal(target), expected);
    });
  }

  for (const rule of generated) {
    it(`${rule.name} (built at test time)`, () => {
      temp = tempDir();
      expectRefusal(refusal(rule.build(join(temp.path, 'b'))), rule.expected);
    });
  }

  it('has a fixture for every admission code', () => {
    const covered = new Set<string>();
    for (const name of committed) {
      const expected = JSON.parse(readFileSync(join(committedDir, name, 'expected.json'), 'utf8')) as Expected;
      if (expected.code) covered.add(expected.code);
    }
    for (const rule of generated) covered.add(rule.expected.code!);
    expect([...covered].sort()).toEqual([...AdmissionCodes].sort());
  });

  it('accepts the manifest path itself as well as the directory, and never writes anything', () => {
    const target = join(committedDir, 'valid', 'bundle');
    const before = readdirSync(target).sort();
    const viaFile = admitBundle(join(target, 'gobstopper-plugin.json'), { gobstopperVersion: '0.1.0' });
    expect(viaFile.manifest.id).toBe('admission-fixture');
    expect(readdirSync(target).sort()).toEqual(before);
  });

  it('refuses a path that does not exist', () => {
    expectRefusal(refusal('/nonexistent/bundle/dir'), { code: 'not_a_bundle' });
    expect(existsSync('/nonexistent/bundle/dir')).toBe(false);
  });
});
