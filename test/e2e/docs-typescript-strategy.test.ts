/**
 * The TypeScript strategy of docs/plugin-protocol.md, built and installed the way the page says:
 * its code block bundled with esbuild, the manifest's `files` filled in by rehash.mjs, `plugin
 * add`, then a plan under its id. The code is read from the page itself, so the page cannot drift
 * from what works.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterEach, describe, expect, it } from 'vitest';
import { runJson } from '../helpers/cli.js';
import { DEMO_CLAUDE_ID, demoHome } from '../helpers/demo-home.js';

const root = join(import.meta.dirname, '..', '..');
let home: ReturnType<typeof demoHome> | undefined;
afterEach(() => home?.cleanup());

/** The `nth` (from 0) ```ts block after `heading` in the plugin authors' page. */
function docsBlock(heading: string, nth = 0): string {
  const page = readFileSync(join(root, 'docs', 'plugin-protocol.md'), 'utf8');
  const section = page.slice(page.indexOf(heading));
  const match = [...section.matchAll(/```ts\n([\s\S]*?)```/g)][nth];
  if (!match) throw new Error(`no ts block ${nth} after ${heading}`);
  return match[1]!;
}

/** Bundles a page's code block as the page says, writes its manifest and fills in `files`. */
async function bundleFromDocs(work: string, source: string, manifest: { id: string; provides: Record<string, string[]> }): Promise<string> {
  const bundle = join(work, 'bundle');
  mkdirSync(bundle, { recursive: true });
  writeFileSync(join(work, 'main.ts'), source);
  // What `npm install <clone>` would make of the import: the package at the repository root.
  await build({ entryPoints: [join(work, 'main.ts')], bundle: true, platform: 'node', format: 'cjs', target: 'node20', outfile: join(bundle, 'main.cjs'), alias: { gobstopper: root }, logLevel: 'silent' });
  writeFileSync(
    join(bundle, 'gobstopper-plugin.json'),
    JSON.stringify({ protocol_version: 1, ...manifest, version: '0.1.0', runtime: 'node', executable: 'main.cjs', files: {}, engines: { gobstopper: '>=0.1.0 <1.0.0' } }),
  );
  execFileSync(process.execPath, [join(root, 'examples', 'plugins', 'rehash.mjs'), bundle], { stdio: 'pipe' });
  return bundle;
}

/** Bundles a page's code block into the current home and installs it with `plugin add`, as the page says. */
async function addFromDocs(source: string, manifest: { id: string; provides: Record<string, string[]> }): Promise<void> {
  const bundle = await bundleFromDocs(join(home!.root, manifest.id), source, manifest);
  const added = await runJson(['plugin', 'add', bundle], home!.env);
  expect(added.code, JSON.stringify(added.json)).toBe(0);
}

describe('the TypeScript strategy in docs/plugin-protocol.md', () => {
  it('bundles, installs and plans as the page says', async () => {
    home = demoHome('[policy]\ntrigger_tokens = 20000\nfloor_tokens = 8000\n');
    const source = docsBlock('## A TypeScript strategy');
    expect(source).toContain("from 'gobstopper/dist/sdk/index.js'");
    await addFromDocs(source, { id: 'keep-last-ts', provides: { strategies: ['keep_last_ts'] } });
    const planned = await runJson(['plan', DEMO_CLAUDE_ID, '--strategy', 'keep_last_ts', '--trigger', '1000', '--floor', '0'], home.env);
    expect(planned.code, JSON.stringify(planned.json)).toBe(0);
    expect(planned.json.status).toBe('plan');
    expect(planned.json.plan.strategy).toBe('keep_last_ts');
    expect(planned.json.plan.rationale).toMatch(/^stubbed \d+ outputs$/);
    const elided = planned.json.plan.edits.filter((e: { op: string }) => e.op === 'elide').flatMap((e: { line_indexes: number[] }) => e.line_indexes);
    expect(elided.length).toBeGreaterThan(0);
    expect(planned.json.plan.context_tokens_after).toBeLessThan(planned.json.plan.context_tokens_before);
  });

  it('has a scorer that scored ranks with once the policy names it', async () => {
    home = demoHome('[policy]\ntrigger_tokens = 20000\nfloor_tokens = 8000\nscorer = "size_ts"\n');
    const source = docsBlock('## A TypeScript strategy', 1);
    expect(source).toContain('scorers:');
    await addFromDocs(source, { id: 'size-scorer-ts', provides: { scorers: ['size_ts'] } });
    const planned = await runJson(['plan', DEMO_CLAUDE_ID, '--strategy', 'scored', '--trigger', '40000', '--floor', '35000'], home.env);
    expect(planned.code, JSON.stringify(planned.json)).toBe(0);
    expect(planned.json.status).toBe('plan');
    expect(planned.json.plan.rationale).toMatch(/\| scorer size_ts: size: \d+ outputs$/);
  });
});
