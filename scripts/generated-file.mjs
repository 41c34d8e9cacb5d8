// One generated file that is committed: written by the build, or with --check compared with the
// committed copy (the test suite's way of catching a file that no longer matches its source).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';

export function writeOrCheck(root, file, text, argv = process.argv) {
  const name = relative(root, file);
  if (argv.includes('--check')) {
    if (!existsSync(file) || readFileSync(file, 'utf8') !== text) {
      console.error(`${name} is stale; run npm run build`);
      process.exit(1);
    }
    console.log(`${name} is up to date`);
  } else {
    writeFileSync(file, text);
  }
}
