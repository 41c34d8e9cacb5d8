import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const script = join(import.meta.dirname, '..', '..', 'scripts', 'test-summary.mjs');

// The fields vitest's JSON reporter writes for one file that cannot import, one whose beforeAll throws
// (its test is reported skipped) and one with a passing and a failing test.
const report = {
  numTotalTests: 3,
  numPassedTests: 1,
  numFailedTests: 1,
  numPendingTests: 1,
  numTodoTests: 0,
  success: false,
  testResults: [
    { name: 'a.test.ts', status: 'failed', message: "Cannot find module './gone.js'", assertionResults: [] },
    { name: 'b.test.ts', status: 'failed', message: '', assertionResults: [{ title: 'y', status: 'skipped' }] },
    {
      name: 'c.test.ts',
      status: 'failed',
      message: '',
      assertionResults: [{ title: 'z', status: 'passed' }, { title: 'w', status: 'failed' }],
    },
  ],
};

function summarize(value: unknown, vitestStatus?: number): { status: number | null; stdout: string } {
  const dir = mkdtempSync(join(tmpdir(), 'gob-summary-'));
  try {
    const file = join(dir, 'vitest.json');
    writeFileSync(file, JSON.stringify(value));
    const run = spawnSync(process.execPath, [script, file, ...(vitestStatus === undefined ? [] : [String(vitestStatus)])], { encoding: 'utf8' });
    return { status: run.status, stdout: run.stdout };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('scripts/test-summary.mjs <vitest.json>', () => {
  it('counts a file that fails to import or to set up as failed, beside its failed tests', () => {
    const run = summarize(report);
    expect(run.stdout).toBe('1 passed, 3 failed, 1 skipped\n');
    expect(run.status).toBe(1);
  });

  const passing = {
    ...report,
    numFailedTests: 0,
    numPendingTests: 0,
    success: true,
    testResults: [{ name: 'c.test.ts', status: 'passed', message: '', assertionResults: [{ title: 'z', status: 'passed' }] }],
  };

  it('passes a run whose files all passed', () => {
    const run = summarize(passing, 0);
    expect(run.stdout).toBe('1 passed, 0 failed, 0 skipped\n');
    expect(run.status).toBe(0);
  });

  it('counts an error thrown outside any test, which fails vitest but is in no test of its report', () => {
    const run = summarize(passing, 1);
    expect(run.stdout).toBe('vitest exited with status 1 for errors outside any test (printed above)\n1 passed, 1 failed, 0 skipped\n');
    expect(run.status).toBe(1);
  });
});
