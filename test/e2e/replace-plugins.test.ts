import { createHash } from 'node:crypto';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { validatePlanCommandResult } from '../../schemas/generated/validators.js';
import { fixturePluginBundle } from '../fixtures/bundles/build-bundle.js';
import { runCli, runJson } from '../helpers/cli.js';
import { DEMO_CLAUDE_ID, demoHome, listFiles } from '../helpers/demo-home.js';

const root = join(import.meta.dirname, '..', '..');
type Home = ReturnType<typeof demoHome>;
let home: Home | undefined;
afterEach(() => home?.cleanup());

function setConfig(h: Home, body: string): void {
  writeFileSync(join(h.configHome, 'gobstopper', 'config.toml'), body);
}

/** The built-in Claude Code provider behind a relay that misreports one answer (see the fixture), installed. */
async function addMisreportingProvider(h: Home, misreports: 'render' | 'fork-target'): Promise<void> {
  const provider = readFileSync(join(root, 'dist', 'plugins', 'provider-claude-code', 'main.cjs'));
  const bundle = fixturePluginBundle(join(h.root, 'misreporting'), 'misreporting-provider.mjs', {
    id: 'misreporting-provider',
    provides: { providers: ['claude_code'] },
    args: ['misreporting-provider', misreports],
    environment: ['HOME', 'CLAUDE_CONFIG_DIR'],
    limits: { timeout_ms: 60000, max_output_bytes: 268435456 },
  });
  writeFileSync(join(bundle, 'main.cjs'), provider);
  const manifestPath = join(bundle, 'gobstopper-plugin.json');
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
  manifest.files['main.cjs'] = createHash('sha256').update(provider).digest('hex');
  writeFileSync(manifestPath, JSON.stringify(manifest, null, 2));
  expect((await runJson(['plugin', 'add', bundle], h.env)).code).toBe(0);
}

describe('built-ins are replaceable bundles', () => {
  it('an installed Python elide shadows the built-in and yields the same plan', async () => {
    home = demoHome('[policy]\ntrigger_tokens = 20000\nfloor_tokens = 8000\n');
    const builtin = await runJson(['plan', DEMO_CLAUDE_ID, '--strategy', 'elide'], home.env);
    expect(builtin.json.status).toBe('plan');
    const added = await runJson(['plugin', 'add', join(root, 'examples', 'plugins', 'elide-python')], home.env);
    expect(added.code).toBe(0);
    const list = await runJson(['plugin', 'list'], home.env);
    expect(JSON.stringify(list.json)).toContain('elide-python');
    const replaced = await runJson(['plan', DEMO_CLAUDE_ID, '--strategy', 'elide'], home.env);
    expect(replaced.json.plan.edits).toEqual(builtin.json.plan.edits);
    expect(replaced.json.plan.context_tokens_after).toBe(builtin.json.plan.context_tokens_after);
    // Applying through the replacement goes through the same validation and publication.
    const applied = await runJson(['apply', DEMO_CLAUDE_ID, '--strategy', 'elide'], home.env);
    expect(applied.json.status).toBe('applied');
  });

  it('with several versions installed, each id is served by the newest that provides it, and plugin list says which are not used', async () => {
    home = demoHome('[policy]\ntrigger_tokens = 20000\nfloor_tokens = 8000\n');
    const source = join(root, 'examples', 'plugins', 'elide-python');
    const newer = join(home.root, 'elide-python-0.2.0');
    cpSync(source, newer, { recursive: true });
    const main = readFileSync(join(newer, 'main.py'), 'utf8').replace('Plugin("elide-python", "0.1.0")', 'Plugin("elide-python", "0.2.0")');
    writeFileSync(join(newer, 'main.py'), main);
    const manifest = JSON.parse(readFileSync(join(newer, 'gobstopper-plugin.json'), 'utf8'));
    manifest.version = '0.2.0';
    manifest.files['main.py'] = createHash('sha256').update(main).digest('hex');
    writeFileSync(join(newer, 'gobstopper-plugin.json'), JSON.stringify(manifest, null, 2));
    // Installed newest first, so the order of installation cannot be what picks.
    expect((await runJson(['plugin', 'add', newer], home.env)).code).toBe(0);
    expect((await runJson(['plugin', 'add', source], home.env)).code).toBe(0);
    const list = await runJson(['plugin', 'list'], home.env);
    const bundles = list.json.bundles as { id: string; version: string; source: string; superseded_by: string | null; shadowed: { provided_id: string; by: string }[] }[];
    const newerPath = join(home.dataHome, 'gobstopper', 'plugins', 'elide-python', '0.2.0');
    expect(bundles.find((b) => b.source === 'builtin' && b.shadowed.length > 0)?.shadowed).toEqual([{ kind: 'strategy', provided_id: 'elide', by: 'elide-python@0.2.0', by_path: newerPath }]);
    expect(bundles.filter((b) => b.id === 'elide-python').map((b) => [b.version, b.superseded_by])).toEqual(
      expect.arrayContaining([
        ['0.1.0', 'elide-python@0.2.0'],
        ['0.2.0', null],
      ]),
    );
    const human = await runCli(['plugin', 'list'], home.env);
    expect(human.stdout).toContain(`strategies-core@0.1.0 (builtin): shadowed for strategy elide: elide-python@0.2.0 (installed, ${newerPath}) serves it instead\n`);
    expect(human.stdout).toContain('elide-python@0.1.0 (installed): not used; elide-python@0.2.0 serves what it provides\n');
    // A still newer version that provides another id leaves elide with 0.2.0: used is per id.
    const other = join(home.root, 'elide-python-0.3.0');
    cpSync(newer, other, { recursive: true });
    writeFileSync(join(other, 'gobstopper-plugin.json'), JSON.stringify({ ...manifest, version: '0.3.0', provides: { strategies: ['elide_v3'] } }, null, 2));
    expect((await runJson(['plugin', 'add', other], home.env)).code).toBe(0);
    const relisted = (await runJson(['plugin', 'list'], home.env)).json.bundles as typeof bundles;
    expect(relisted.filter((b) => b.id === 'elide-python').map((b) => [b.version, b.superseded_by])).toEqual(
      expect.arrayContaining([
        ['0.1.0', 'elide-python@0.2.0'],
        ['0.2.0', null],
        ['0.3.0', null],
      ]),
    );
  });

  it('a scorer bundle in Python, selected by configuration, changes what scored elides', async () => {
    home = demoHome('[policy]\ntrigger_tokens = 40000\nfloor_tokens = 35000\nstrategy = "scored"\n');
    const heuristic = await runJson(['plan', DEMO_CLAUDE_ID], home.env);
    expect(heuristic.json.plan.rationale).toContain('heuristic');
    await runJson(['plugin', 'add', join(root, 'examples', 'plugins', 'scorer-recency-python')], home.env);
    setConfig(home, '[policy]\ntrigger_tokens = 40000\nfloor_tokens = 35000\nstrategy = "scored"\nscorer = "recency"\n');
    const recency = await runJson(['plan', DEMO_CLAUDE_ID], home.env);
    expect(recency.json.plan.rationale).toContain('recency');
    expect(recency.json.plan.edits).not.toEqual(heuristic.json.plan.edits);
  });

  it('a scorer answering outside 0..1 is warned about, not silently ranked last', async () => {
    home = demoHome('[policy]\ntrigger_tokens = 20000\nfloor_tokens = 8000\nstrategy = "scored"\nscorer = "percent"\n');
    const bundle = fixturePluginBundle(join(home.root, 'percent-scorer'), 'percent-scorer.mjs', { id: 'percent-scorer', provides: { scorers: ['percent'] } });
    expect((await runJson(['plugin', 'add', bundle], home.env)).code).toBe(0);
    const r = await runCli(['plan', DEMO_CLAUDE_ID], home.env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/^warning: scorer percent gave \d+ keep_probability value\(s\) outside 0\.\.1 \(such as 10 for line_index \d+\); they count as unknown/m);
  });

  it('a scorer that fails is the one named in the error, not the strategy that asked it', async () => {
    home = demoHome('[policy]\ntrigger_tokens = 20000\nfloor_tokens = 8000\nstrategy = "scored"\nscorer = "dying"\n');
    const bundle = fixturePluginBundle(join(home.root, 'dying-scorer'), 'dying-scorer.mjs', { id: 'dying-scorer', provides: { scorers: ['dying'] } });
    expect((await runJson(['plugin', 'add', bundle], home.env)).code).toBe(0);
    const r = await runJson(['plan', DEMO_CLAUDE_ID], home.env);
    expect(r.code).toBe(1);
    expect(r.json.error.code).toBe('plugin_exited');
    expect(r.json.error.message).toContain('plugin dying-scorer');
    expect(r.json.error.message).toContain('scorer giving up on purpose');
    expect(r.json.error.details).toMatchObject({ plugin_id: 'dying-scorer' });
    // GOBSTOPPER_DEBUG shows all the plugin's stderr that was kept, not just the tail in the message.
    const debug = await runCli(['plan', DEMO_CLAUDE_ID], home.env, { extraEnv: { GOBSTOPPER_DEBUG: '1' } });
    expect(debug.code).toBe(1);
    expect(debug.stderr).toMatch(/--- the plugin's stderr \(the last \d+ characters kept\) ---\nscorer giving up on purpose \\u001b\[31mred\n/);
    expect(debug.stderr).not.toContain('\x1b');
  });

  it('auto goes on without a strategy whose scorer fails, and says so', async () => {
    home = demoHome('[policy]\ntrigger_tokens = 20000\nfloor_tokens = 8000\nscorer = "dying"\n');
    const bundle = fixturePluginBundle(join(home.root, 'dying-scorer'), 'dying-scorer.mjs', { id: 'dying-scorer', provides: { scorers: ['dying'] } });
    expect((await runJson(['plugin', 'add', bundle], home.env)).code).toBe(0);
    const r = await runCli(['plan', DEMO_CLAUDE_ID], home.env);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('why: auto: selected');
    expect(r.stderr).toMatch(/^warning: strategy scored failed, so auto chose without it: plugin dying-scorer@[0-9.]+ exited with code 3 during scorer\/score.*scorer giving up on purpose/m);
    // With --json too: the plan carries the warning for a script, and stderr repeats it.
    const json = await runCli(['plan', DEMO_CLAUDE_ID, '--json'], home.env);
    const planned = JSON.parse(json.stdout);
    expect(validatePlanCommandResult(planned)).toBe(true);
    expect(planned.status).toBe('plan');
    expect(planned.warnings).toEqual([expect.stringMatching(/^strategy scored failed, so auto chose without it: plugin dying-scorer@/)]);
    expect(json.stderr).toContain('warning: strategy scored failed, so auto chose without it');
  });

  it('naming a scorer nobody provides is an error, not a silent fallback', async () => {
    home = demoHome('[policy]\ntrigger_tokens = 20000\nfloor_tokens = 8000\nstrategy = "scored"\nscorer = "nobody"\n');
    const r = await runJson(['plan', DEMO_CLAUDE_ID], home.env);
    expect(r.code).toBe(1);
    expect(r.json).toMatchObject({ ok: false, error: { code: 'unknown_scorer', details: { kind: 'scorer', id: 'nobody' } } });
  });

  it('a replacement provider whose render misreports what it wrote is named, and nothing is published', async () => {
    home = demoHome();
    await addMisreportingProvider(home, 'render');
    const before = listFiles(home.claudeDir);
    for (const args of [['apply', DEMO_CLAUDE_ID], ['fork', DEMO_CLAUDE_ID]]) {
      const r = await runJson(args, home.env);
      expect(r.code, args[0]).toBe(1);
      // Not "changed after it was read; run the command again": the provider's answer is at fault.
      expect(r.json.error, args[0]).toMatchObject({
        code: 'invalid_provider_render',
        message: expect.stringMatching(/^provider claude_code \(plugin misreporting-provider\) answered its render with sha256 0{16}…, but the file it wrote hashes to [0-9a-f]{16}…; nothing was published$/),
        details: { plugin_id: 'misreporting-provider' },
      });
    }
    expect(listFiles(home.claudeDir)).toEqual(before);
  });

  it('a replacement provider that puts a fork anywhere but beside its source is named before anything is archived', async () => {
    home = demoHome();
    await addMisreportingProvider(home, 'fork-target');
    const before = listFiles(home.root);
    for (const args of [['apply', DEMO_CLAUDE_ID], ['fork', DEMO_CLAUDE_ID]]) {
      const r = await runJson(args, home.env);
      expect(r.code, args[0]).toBe(1);
      expect(r.json.error, args[0]).toMatchObject({
        code: 'invalid_provider_fork_target',
        message: expect.stringContaining(`(plugin misreporting-provider) answered provider/fork_target with a path outside the source's directory ${home.claudeDir} (${join(home.claudeHome, 'projects')}/`),
        details: { provider: 'claude_code', plugin_id: 'misreporting-provider' },
      });
    }
    // Neither the directory above nor the vault holds anything of it.
    expect(listFiles(home.root)).toEqual(before);
  });
});
