#!/usr/bin/env node
// Prints the plain closing line CI reads ("N passed, N failed, N skipped") from vitest's JSON report.
import { readFileSync, existsSync } from 'node:fs';

const file = process.argv[2] ?? '.tmp/vitest.json';
// vitest's own exit status, when given: an error thrown outside any test (an unhandled rejection, a
// timer that throws after its test passed) fails the run but appears nowhere in the JSON report.
const vitestStatus = Number(process.argv[3] ?? 0);
if (!existsSync(file)) {
  console.log('0 passed, 1 failed');
  process.exit(1);
}
const report = JSON.parse(readFileSync(file, 'utf8'));
const passed = report.numPassedTests ?? 0;
// A file that fails to import, or whose beforeAll throws, fails with no failed test in it (its tests are
// missing or skipped); vitest's totals leave it out, so each such file counts as one failure here.
const erroredFiles = (report.testResults ?? []).filter(
  (f) => f.status === 'failed' && !(f.assertionResults ?? []).some((t) => t.status === 'failed'),
).length;
let failed = (report.numFailedTests ?? 0) + erroredFiles;
if (failed === 0 && vitestStatus !== 0) {
  console.log(`vitest exited with status ${vitestStatus} for errors outside any test (printed above)`);
  failed = 1;
}
const skipped = (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed > 0 || passed === 0 ? 1 : 0);
