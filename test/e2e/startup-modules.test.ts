/**
 * Commands that start no plugin do not load what only starting one needs: execa (~100 modules) and
 * the Ajv compiler (~60) together were ~100 ms of every `explain`, `config` or `vault`. The built
 * CLI runs under a module resolve hook that writes down every module the ES loader resolves.
 */
import { mkdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { makeTempHome, type TempHome } from '../helpers/temp-home.js';
import { modernSession } from '../fixtures/claude/sessions.js';

const HOOKS = `import { appendFileSync } from 'node:fs';
let out;
export function initialize(data) { out = data.out; }
export async function resolve(specifier, context, next) {
  const found = await next(specifier, context);
  appendFileSync(out, found.url + '\\n');
  return found;
}
`;
const REGISTER = `import { register } from 'node:module';
register('./hooks.mjs', import.meta.url, { data: { out: process.env.GOB_TEST_MODULE_LOG } });
`;

let home: TempHome;
let register: string;

beforeAll(() => {
  home = makeTempHome('gob-startup-');
  writeFileSync(join(home.root, 'hooks.mjs'), HOOKS);
  register = join(home.root, 'register.mjs');
  writeFileSync(register, REGISTER);
});
afterAll(() => home.cleanup());

/** The module URLs one run of the CLI resolved. */
async function modulesOf(args: string[], name: string): Promise<string[]> {
  const log = join(home.root, `${name}.log`);
  writeFileSync(log, '');
  // A file URL: NODE_OPTIONS splits on spaces, which a temporary directory may hold.
  const r = await runCli(args, home.env, { extraEnv: { NODE_OPTIONS: `--import ${pathToFileURL(register).href}`, GOB_TEST_MODULE_LOG: log } });
  expect(r.code, r.stderr).toBe(0);
  return readFileSync(log, 'utf8').split('\n').filter(Boolean);
}

// The built CLI bundles execa into a chunk of its own (scripts/build.mjs); from node_modules it is ~100 modules.
const execa = (urls: string[]) => urls.filter((u) => u.includes('/node_modules/execa/') || /\/dist\/cli\/chunks\/execa-\w+\.js$/.test(u));
const ajvCompiler = (urls: string[]) => urls.filter((u) => u.endsWith('/node_modules/ajv/dist/ajv.js'));

describe('modules loaded at startup (built CLI)', () => {
  it.each([
    ['explain', ['explain']],
    ['config', ['config']],
    ['vault', ['vault']],
    ['policy-check', ['policy-check', '--provider', 'codex', '--context-tokens', '300000', '--json']],
  ])('%s loads neither execa nor the Ajv compiler', async (name, args) => {
    const urls = await modulesOf(args, name);
    expect(urls.length).toBeGreaterThan(50);
    expect(execa(urls)).toEqual([]);
    expect(ajvCompiler(urls)).toEqual([]);
  });

  it('a plan starts plugins with execa, and loads the Ajv compiler only for a strategy that declares params', async () => {
    const id = 'a1b2c3d4-0000-4000-8000-000000000001';
    const dir = join(home.claudeHome, 'projects', '-home-dev-projects-demo');
    mkdirSync(dir, { recursive: true });
    const path = modernSession({ sessionId: id }).write(join(dir, `${id}.jsonl`));
    const hourAgo = new Date(Date.now() - 3600_000);
    utimesSync(path, hourAgo, hourAgo);
    const plan = (strategy: string) => ['plan', 'a1b2c3d4', '--strategy', strategy, '--trigger', '1000', '--floor', '500', '--json'];
    // elide declares none: its empty params pass without a compiler.
    const elide = await modulesOf(plan('elide'), 'plan-elide');
    expect(execa(elide).length).toBeGreaterThan(0);
    expect(ajvCompiler(elide)).toEqual([]);
    // auto declares its candidates and the like: its schema is compiled, even for empty params.
    const auto = await modulesOf(plan('auto'), 'plan-auto');
    expect(new Set(ajvCompiler(auto)).size).toBe(1);
  });
});
