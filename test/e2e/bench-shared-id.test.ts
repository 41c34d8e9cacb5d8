/**
 * Two files holding one session id (a copied project folder): eval refuses the bare id and asks for
 * a path, and bench measures both, telling their rows apart by path. The built CLI, demo sessions.
 */
import { copyFileSync, mkdirSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { BenchCommandResult } from '../../schemas/generated/types.js';
import { validateBenchCommandResult } from '../../schemas/generated/validators.js';
import { runCli, runJson } from '../helpers/cli.js';
import { DEMO_CLAUDE_ID, demoHome } from '../helpers/demo-home.js';

describe('bench over two files with one session id', () => {
  let home: ReturnType<typeof demoHome> | undefined;
  afterEach(() => home?.cleanup());

  it('names each row by its path, and the table says which files share the id', async () => {
    home = demoHome();
    const copyDir = join(home.claudeHome, 'projects', '-home-dev-projects-invoices-copy');
    mkdirSync(copyDir, { recursive: true });
    const copy = join(copyDir, `${DEMO_CLAUDE_ID}.jsonl`);
    copyFileSync(home.claudeSession, copy);
    const hourAgo = new Date(Date.now() - 3600_000);
    utimesSync(copy, hourAgo, hourAgo);

    const { code, json } = await runJson<BenchCommandResult>(['bench', '--provider', 'claude_code', '--strategy', 'elide'], home.env);
    expect(code).toBe(0);
    expect(validateBenchCommandResult(json), JSON.stringify(validateBenchCommandResult.errors)).toBe(true);
    const paths = json.rows.filter((r) => r.session === DEMO_CLAUDE_ID).map((r) => r.path).sort();
    expect(paths).toEqual([home.claudeSession, copy].sort());

    const human = await runCli(['bench', '--provider', 'claude_code', '--strategy', 'elide'], home.env);
    expect(human.code).toBe(0);
    expect(human.stdout.replace(/\n/g, ' ')).toContain(`note: 2 files hold claude_code ${DEMO_CLAUDE_ID}, so the table shows its rows once per file:`);
    expect(human.stdout).toContain(copy);
  });
});
