import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runJson } from '../helpers/cli.js';
import { DEMO_CLAUDE_ID, demoHome, listFiles } from '../helpers/demo-home.js';

type Home = ReturnType<typeof demoHome>;
let home: Home | undefined;
afterEach(() => home?.cleanup());

describe('undo runs of one session started together', () => {
  it('publish one restore: the later ones wait for it and return it', async () => {
    home = demoHome();
    expect((await runJson(['snapshot', DEMO_CLAUDE_ID], home.env)).code).toBe(0);
    const before = new Set(listFiles(home.claudeDir));
    const runs = await Promise.all([0, 1, 2].map(() => runJson(['undo', DEMO_CLAUDE_ID], home!.env)));
    for (const run of runs) expect(run.code, JSON.stringify(run.json)).toBe(0);
    const added = listFiles(home.claudeDir).filter((f) => !before.has(f));
    expect(added).toHaveLength(1);
    for (const run of runs) expect(run.json.receipt.path).toBe(added[0]);
    expect(runs.filter((r) => r.json.reused === true)).toHaveLength(2);
    const operations = join(home.dataHome, 'gobstopper', 'vault', 'operations');
    const receipts = readdirSync(operations)
      .filter((n) => n.endsWith('.json'))
      .map((n) => JSON.parse(readFileSync(join(operations, n), 'utf8')));
    expect(receipts.filter((r) => r.kind === 'restore')).toHaveLength(1);
    // Every lock was released.
    expect(readdirSync(operations).filter((n) => n.endsWith('.lock'))).toEqual([]);
  });
});
