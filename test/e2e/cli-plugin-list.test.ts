/**
 * oclif reads the list of npm plugins `gobstopper plugins` installed at every start; a list it cannot
 * read is a one-line warning naming it, not a Node process warning of several lines.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { makeTempHome, type TempHome } from '../helpers/temp-home.js';

let home: TempHome | undefined;
afterEach(() => {
  home?.cleanup();
  home = undefined;
});

describe('the list of npm-installed CLI plugins', () => {
  it('that is not JSON is one warning line naming the file, and the command still answers', async () => {
    home = makeTempHome();
    const list = join(home.dataHome, 'gobstopper-cli', 'package.json');
    mkdirSync(join(home.dataHome, 'gobstopper-cli'));
    writeFileSync(list, '{');
    const r = await runCli(['vault', '--json'], home.env);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([]);
    expect(r.stderr.split('\n')).toEqual([`warning: Expected property name or '}' in JSON at position 1 (in ${list}, the list of npm plugins \`gobstopper plugins\` installed)`, '']);
  });

  it('that names a plugin not installed is one warning line', async () => {
    home = makeTempHome();
    mkdirSync(join(home.dataHome, 'gobstopper-cli'));
    writeFileSync(join(home.dataHome, 'gobstopper-cli', 'package.json'), JSON.stringify({ oclif: { plugins: [{ type: 'user', name: 'not-installed-plugin' }] } }));
    const r = await runCli(['vault', '--json'], home.env);
    expect(r.code).toBe(0);
    expect(r.stderr.split('\n')).toEqual([expect.stringMatching(/^warning: .*not-installed-plugin.* \(in .*gobstopper-cli\/package\.json, the list/), '']);
  });

  it('cannot exist under a data directory that is a file: only gobstopper\'s own error is said', async () => {
    home = makeTempHome();
    rmSync(home.dataHome, { recursive: true });
    writeFileSync(home.dataHome, 'not a directory');
    const r = await runCli(['vault'], home.env);
    expect(r.code).toBe(1);
    expect(r.stderr.split('\n')).toEqual([expect.stringMatching(new RegExp(`^gobstopper: .*${home.dataHome} is a file where a directory is expected`)), '']);
  });
});
