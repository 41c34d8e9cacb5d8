/**
 * A fork the provider cannot finish writing because the disk (here a file-size limit, `ulimit -f`)
 * stops it: the user hears what stopped it under its errno, the events log counts it as io, watch
 * would try again, and nothing is left behind.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { binPath, runJson } from '../helpers/cli.js';
import { DEMO_CLAUDE_ID, demoHome, listFiles, sha256File } from '../helpers/demo-home.js';

type Home = ReturnType<typeof demoHome>;
let home: Home | undefined;
afterEach(() => home?.cleanup());

/** `gobstopper <args> --json` under a 4 KiB file-size limit; SIGXFSZ ignored, so writes fail with EFBIG. */
function underFileSizeLimit(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve, reject) => {
    const quoted = args.map((a) => `'${a}'`).join(' ');
    const child = spawn('bash', ['-c', `trap '' XFSZ; ulimit -f 8; exec "${process.execPath}" "${binPath}" ${quoted} --json`], { cwd: env.HOME, env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'ignore'] });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.on('error', reject).on('close', (code) => resolve({ code, stdout }));
  });
}

describe('apply stopped by a file-size limit while the provider writes the fork', () => {
  it('names the limit under its errno, logs io, publishes nothing and leaves no staging file', async () => {
    home = demoHome();
    // Archived first, so the limit meets the fork (the larger write) rather than the vault's chunks.
    expect((await runJson(['snapshot', DEMO_CLAUDE_ID], home.env)).code).toBe(0);
    const source = sha256File(home.claudeSession);
    const before = listFiles(home.claudeDir);

    const limited = await underFileSizeLimit(['apply', DEMO_CLAUDE_ID], home.env);
    expect(limited.code).toBe(1);
    const { error } = JSON.parse(limited.stdout) as { error: { code: string; message: string } };
    expect(error.code).toBe('efbig');
    expect(error.message).toMatch(/^cannot write the candidate into .*: the file would grow past the largest file this process may write \(ulimit -f\).*\(EFBIG\); raise that limit and run the command again$/);

    expect(sha256File(home.claudeSession)).toBe(source);
    expect(listFiles(home.claudeDir)).toEqual(before);
    const staging = join(home.dataHome, 'gobstopper', 'staging');
    expect(existsSync(staging) ? readdirSync(staging) : []).toEqual([]);
    const events = readFileSync(join(home.dataHome, 'gobstopper', 'events.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(events.at(-1)).toMatchObject({ session_id: DEMO_CLAUDE_ID, outcome: 'failed', error_code: 'io' });

    // With the limit gone, the same apply publishes.
    const again = await runJson(['apply', DEMO_CLAUDE_ID], home.env);
    expect(again.code, JSON.stringify(again.json)).toBe(0);
    expect(listFiles(home.claudeDir)).toHaveLength(before.length + 1);
  });
});
