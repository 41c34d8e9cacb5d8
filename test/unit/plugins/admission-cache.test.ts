import { mkdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { admitBundle } from '../../../kernel/plugins/admission/admit.js';
import { checkFileHash } from '../../../kernel/plugins/admission/file-hashes.js';
import { AdmissionError } from '../../../kernel/plugins/admission/rules.js';
import { tempDir, writeBundle, type TempDir } from '../../fixtures/bundles/build-bundle.js';

// Counts the files admission hashes, hashing them as it always does.
vi.mock('../../../kernel/plugins/admission/file-hashes.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../../kernel/plugins/admission/file-hashes.js')>();
  return { ...actual, checkFileHash: vi.fn(actual.checkFileHash) };
});
const hashed = vi.mocked(checkFileHash);

const options = { gobstopperVersion: '0.1.0' };

function refusal(target: string): AdmissionError {
  try {
    admitBundle(target, options);
  } catch (error) {
    expect(error).toBeInstanceOf(AdmissionError);
    return error as AdmissionError;
  }
  throw new Error(`${target} was admitted`);
}

/** Admission trusts a stat only once the files have been left alone a while: the clock is moved past that. */
function letFilesSettle(): void {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(Date.now() + 60_000);
}

describe('admission within one process', () => {
  let temp: TempDir;
  let bundle: string;
  beforeEach(() => {
    temp = tempDir();
    bundle = writeBundle(join(temp.path, 'b'), { files: { 'main.mjs': 'export const a = 1;\n', 'lib/util.mjs': 'export const b = 2;\n' } });
    hashed.mockClear();
  });
  afterEach(() => {
    vi.useRealTimers();
    temp.cleanup();
  });

  it('does not hash an unchanged bundle again', () => {
    letFilesSettle();
    const first = admitBundle(bundle, options);
    expect(hashed).toHaveBeenCalledTimes(2);
    const second = admitBundle(join(bundle, 'gobstopper-plugin.json'), options);
    expect(second).toBe(first);
    expect(hashed).toHaveBeenCalledTimes(2);
  });

  it('refuses a file rewritten to the same size with its mtime put back', () => {
    // A whole second, which utimes can put back exactly (it takes seconds as a double).
    const file = join(bundle, 'main.mjs');
    utimesSync(file, 1_700_000_000, 1_700_000_000);
    letFilesSettle();
    admitBundle(bundle, options);
    const before = statSync(file, { bigint: true });
    writeFileSync(file, 'export const a = 9;\n');
    utimesSync(file, 1_700_000_000, 1_700_000_000);
    const after = statSync(file, { bigint: true });
    expect([after.ino, after.size, after.mtimeNs]).toEqual([before.ino, before.size, before.mtimeNs]);

    const error = refusal(bundle);
    expect(error.code).toBe('file_hash_mismatch');
    expect(error.details.file).toBe('main.mjs');
    expect(error.message).toBe(
      `bundle ${bundle}: main.mjs does not match the sha256 pinned in the manifest (changed or damaged); if you changed it, pin its sha256 again in the manifest's "files" (gobstopper's examples/plugins/rehash.mjs <bundle-dir> writes them)`,
    );
    // Refusals are not remembered: the next admission looks again and refuses again.
    expect(refusal(bundle).code).toBe('file_hash_mismatch');
  });

  it('notices a file added to a subdirectory', () => {
    letFilesSettle();
    admitBundle(bundle, options);
    writeFileSync(join(bundle, 'lib', 'extra.mjs'), 'x');
    const error = refusal(bundle);
    expect(error.code).toBe('file_undeclared');
    expect(error.details.file).toBe('lib/extra.mjs');
  });

  it('notices a new directory, and a changed gobstopper version is admitted on its own', () => {
    letFilesSettle();
    admitBundle(bundle, options);
    mkdirSync(join(bundle, 'lib', 'cache'));
    writeFileSync(join(bundle, 'lib', 'cache', 'entry'), 'x');
    expect(refusal(bundle).code).toBe('file_undeclared');

    const other = writeBundle(join(temp.path, 'c'), { files: { 'main.mjs': 'x' } });
    letFilesSettle();
    admitBundle(other, options);
    expect(() => admitBundle(other, { gobstopperVersion: '1.0.0' })).toThrow(/needs gobstopper >=0\.1\.0 <1\.0\.0, this is 1\.0\.0/);
  });

  it('hashes a bundle changed moments ago on every admission', () => {
    admitBundle(bundle, options);
    admitBundle(bundle, options);
    expect(hashed).toHaveBeenCalledTimes(4);
  });
});
