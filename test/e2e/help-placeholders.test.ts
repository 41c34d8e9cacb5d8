/**
 * Every command's help names a flag's value the same way in its USAGE line and in its flag list: a
 * reader told `--claude-home <path>` above must not meet `--claude-home=<value>` below.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, runJson } from '../helpers/cli.js';
import { makeTempHome } from '../helpers/temp-home.js';

const home = makeTempHome('gob-help-');
afterAll(() => home.cleanup());

/** `--name <value>` pairs of the USAGE section (wrapped lines joined). */
function usagePairs(help: string): Map<string, string> {
  const usage = /USAGE\n([\s\S]*?)\n\n/.exec(help)?.[1]?.replace(/\s+/g, ' ') ?? '';
  return new Map([...usage.matchAll(/--([a-z0-9-]+) (<[^>]+>)/g)].map((m) => [m[1]!, m[2]!]));
}

describe('help placeholders', () => {
  it('each flag value named in a USAGE line is named alike in the flag list', { timeout: 120_000 }, async () => {
    const listed = await runJson(['help'], home.env);
    expect(listed.code).toBe(0);
    const commands: string[] = listed.json.commands.map((c: { command: string }) => c.command);
    expect(commands).toContain('watch');
    let compared = 0;
    const differing: string[] = [];
    const unnamed: string[] = [];
    for (const command of commands) {
      const help = (await runCli([...command.split(' '), '--help'], home.env, { extraEnv: { COLUMNS: '200' } })).stdout;
      for (const [flag, value] of usagePairs(help)) {
        const listedAs = new RegExp(`--${flag}=(<[^>]+>)`).exec(help)?.[1];
        if (listedAs === undefined) continue;
        if (listedAs !== value) differing.push(`${command} --${flag}: ${value} in USAGE, ${listedAs} in the flags`);
        compared += 1;
      }
      // A flag that writes a new file says so where its value is named, as export's -o does.
      // A summary's wrapped lines are indented past the flag names: joined, each flag is one line.
      const flagLines = help.replace(/\n {10,}(?=\S)/g, ' ');
      for (const m of flagLines.matchAll(/^ {2,8}(?:-\w, )?--([a-z0-9-]+)=(<[^>]+>|\S+)\s+(.*)$/gm)) {
        if (/\bnew file\b/.test(m[3]!) && m[2] !== '<new file>') unnamed.push(`${command} --${m[1]}=${m[2]}`);
      }
    }
    expect(differing).toEqual([]);
    expect(unnamed).toEqual([]);
    expect(compared).toBeGreaterThan(20);
  });
});
