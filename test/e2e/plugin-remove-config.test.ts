import { createHash } from 'node:crypto';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import * as validators from '../../schemas/generated/validators.js';
import { writeBundle } from '../fixtures/bundles/build-bundle.js';
import { runCli, runJson } from '../helpers/cli.js';
import { DEMO_CLAUDE_ID, DEMO_CODEX_ID, demoHome } from '../helpers/demo-home.js';

const root = join(import.meta.dirname, '..', '..');
type Home = ReturnType<typeof demoHome>;
let home: Home | undefined;
afterEach(() => home?.cleanup());

describe('plugin remove of a bundle the config still names', () => {
  it('removes it and warns, naming the file and table of each key that still refers to it', async () => {
    home = demoHome();
    const env = home.env;
    for (const example of ['keep-last-python', 'elide-python']) expect((await runJson(['plugin', 'add', join(root, 'examples', 'plugins', example)], env)).code).toBe(0);
    const scorer = writeBundle(join(home.root, 'fancy-scorer'), { files: { 'main.mjs': 'x' }, manifest: { id: 'fancy-scorer', provides: { scorers: ['fancy'] } } });
    expect((await runJson(['plugin', 'add', scorer], env)).code).toBe(0);
    const installedManifest = join(home.dataHome, 'gobstopper', 'plugins', 'keep-last-python', '0.1.0', 'gobstopper-plugin.json');
    const sha = createHash('sha256').update(readFileSync(installedManifest)).digest('hex');
    const config = join(home.configHome, 'gobstopper', 'config.toml');
    writeFileSync(
      config,
      [
        '[policy]\nstrategy = "keep_last_py"\ntrigger_tokens = 20000\nfloor_tokens = 8000',
        '[provider.codex]\nscorer = "fancy"',
        '[presets.el]\nstrategy = "elide"',
        `[sessions.abc]\nstrategy = "keep_last_py"\nplugin = { manifest = ${JSON.stringify(installedManifest)}, trusted_sha256 = "${sha}" }`,
      ].join('\n\n') + '\n',
    );

    const removed = await runJson(['plugin', 'remove', 'keep-last-python'], env);
    expect(removed.code, removed.stderr).toBe(0);
    expect(validators.validatePluginRemoveCommandResult(removed.json), JSON.stringify(validators.validatePluginRemoveCommandResult.errors)).toBe(true);
    // The session table's strategy is its own pin's, not an installed bundle's: only the pin is named there.
    expect(removed.json.warnings).toEqual([
      `strategy = "keep_last_py" in [policy] of ${config} was served by the removed keep-last-python@0.1.0; nothing serves it now, so plan refuses that table until it names another strategy`,
      `plugin in [sessions."abc"] of ${config} pins ${installedManifest}, the installed copy of the removed keep-last-python@0.1.0; plan refuses that table until it pins a bundle that exists`,
    ]);
    expect(removed.stderr).toBe('');
    // As warned: the next plan refuses the policy.
    const plan = await runJson(['plan', DEMO_CLAUDE_ID], env);
    expect({ code: plan.code, error: plan.json.error.code }).toEqual({ code: 1, error: 'unknown_strategy' });

    // Without --json the warnings go to stderr, one line each, after what was removed.
    const elide = await runCli(['plugin', 'remove', 'elide-python'], env);
    expect(elide.code).toBe(0);
    expect(elide.stdout).toMatch(/^Removed elide-python 0\.1\.0 /);
    expect(elide.stderr).toBe(`warning: strategy = "elide" in [presets.el] of ${config} was served by the removed elide-python@0.1.0; strategies-core@0.1.0 serves it now\n`);

    const fancy = await runCli(['plugin', 'remove', 'fancy-scorer'], env);
    expect(fancy.stderr).toBe(`warning: scorer = "fancy" in [provider.codex] of ${config} was served by the removed fancy-scorer@1.0.0; nothing serves it now, so plan refuses that table until it names another scorer\n`);
  });

  it('warns about a strategy as plan layers its table: not where a pin of a lower table proposes for it, still where a plan looks it up', async () => {
    home = demoHome();
    const env = home.env;
    const example = join(root, 'examples', 'plugins', 'keep-last-python');
    const pinned = join(home.root, 'pinned-keep-last-python');
    cpSync(example, pinned, { recursive: true });
    const manifest = join(pinned, 'gobstopper-plugin.json');
    const pin = `plugin = { manifest = ${JSON.stringify(manifest)}, trusted_sha256 = "${createHash('sha256').update(readFileSync(manifest)).digest('hex')}" }`;
    const config = join(home.configHome, 'gobstopper', 'config.toml');
    const limits = 'trigger_tokens = 20000\nfloor_tokens = 8000';

    // The preset names the strategy the [policy] pin runs: plan --preset runs the pin there too.
    expect((await runJson(['plugin', 'add', example], env)).code).toBe(0);
    writeFileSync(config, `[policy]\nstrategy = "keep_last_py"\n${limits}\n${pin}\n\n[presets.k]\nstrategy = "keep_last_py"\nfloor_tokens = 9000\n`);
    const quiet = await runCli(['plugin', 'remove', 'keep-last-python'], env);
    expect({ code: quiet.code, stderr: quiet.stderr }).toEqual({ code: 0, stderr: '' });
    const plan = await runJson(['plan', DEMO_CLAUDE_ID, '--preset', 'k'], env);
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.json.plan.strategy).toBe('preset:keep_last_py');

    // Pinned for one provider only: a plan of the preset for another provider looks the strategy up.
    expect((await runJson(['plugin', 'add', example], env)).code).toBe(0);
    writeFileSync(config, `[policy]\n${limits}\n\n[provider.claude_code]\nstrategy = "keep_last_py"\n${pin}\n\n[presets.k]\nstrategy = "keep_last_py"\n`);
    const warned = await runCli(['plugin', 'remove', 'keep-last-python'], env);
    expect(warned.stderr).toBe(
      `warning: strategy = "keep_last_py" in [presets.k] of ${config} was served by the removed keep-last-python@0.1.0; nothing serves it now, so plan refuses that table until it names another strategy\n`,
    );
    expect((await runJson(['plan', DEMO_CLAUDE_ID, '--preset', 'k'], env)).json.plan.strategy).toBe('preset:keep_last_py');
    const codex = await runJson(['plan', DEMO_CODEX_ID, '--preset', 'k'], env);
    expect({ code: codex.code, error: codex.json.error.code }).toEqual({ code: 1, error: 'unknown_strategy' });
  });

  it("warns about a removed strategy id inside strategy_params, where the strategy's params_schema marks one, and leaves the config as it was", async () => {
    home = demoHome();
    const env = home.env;
    const example = join(root, 'examples', 'plugins', 'keep-last-python');
    const config = join(home.configHome, 'gobstopper', 'config.toml');
    const policy = '[policy]\nstrategy = "auto"\ntrigger_tokens = 20000\nfloor_tokens = 8000\n';

    expect((await runJson(['plugin', 'add', example], env)).code).toBe(0);
    const text = `${policy}\n[policy.strategy_params]\ncandidates = ["elide", "keep_last_py"]\n\n[presets.edited]\nstrategy = "agentic"\nstrategy_params = { editor = "keep_last_py" }\n`;
    writeFileSync(config, text);
    const removed = await runJson(['plugin', 'remove', 'keep-last-python'], env);
    expect(removed.code, removed.stderr).toBe(0);
    expect(validators.validatePluginRemoveCommandResult(removed.json)).toBe(true);
    expect(removed.json.warnings).toEqual([
      `strategy_params.candidates[1] = "keep_last_py" in [policy] of ${config} (a strategy id for auto) was served by the removed keep-last-python@0.1.0; nothing serves it now, so plan refuses that table until it names another strategy there`,
      `strategy_params.editor = "keep_last_py" in [presets.edited] of ${config} (a strategy id for agentic) was served by the removed keep-last-python@0.1.0; nothing serves it now, so plan refuses that table until it names another strategy there`,
    ]);
    expect(readFileSync(config, 'utf8')).toBe(text);
    // As warned: plan refuses the policy for that candidate.
    const plan = await runJson(['plan', DEMO_CLAUDE_ID], env);
    expect({ code: plan.code, error: plan.json.error.code, key: plan.json.error.details.key }).toEqual({ code: 1, error: 'unknown_strategy', key: 'strategy_params.candidates[1]' });

    // Candidates that name only what is left: nothing to say.
    expect((await runJson(['plugin', 'add', example], env)).code).toBe(0);
    writeFileSync(config, `${policy}strategy_params = { candidates = ["elide", "dedupe"] }\n`);
    const quiet = await runCli(['plugin', 'remove', 'keep-last-python'], env);
    expect({ code: quiet.code, stderr: quiet.stderr }).toEqual({ code: 0, stderr: '' });
  });

  it('warns about each candidate the removed bundle served, when it served more than one of them', async () => {
    home = demoHome();
    const env = home.env;
    const pair = writeBundle(join(home.root, 'pair'), { files: { 'main.mjs': 'x' }, manifest: { id: 'pair', provides: { strategies: ['first_s', 'second_s'] } } });
    expect((await runJson(['plugin', 'add', pair], env)).code).toBe(0);
    const config = join(home.configHome, 'gobstopper', 'config.toml');
    const text = '[policy]\nstrategy = "auto"\ntrigger_tokens = 20000\nfloor_tokens = 8000\nstrategy_params = { candidates = ["first_s", "elide", "second_s"] }\n';
    writeFileSync(config, text);
    const removed = await runJson(['plugin', 'remove', 'pair'], env);
    expect(removed.code, removed.stderr).toBe(0);
    expect(validators.validatePluginRemoveCommandResult(removed.json)).toBe(true);
    const warning = (key: string, id: string) =>
      `${key} = "${id}" in [policy] of ${config} (a strategy id for auto) was served by the removed pair@1.0.0; nothing serves it now, so plan refuses that table until it names another strategy there`;
    expect(removed.json.warnings).toEqual([warning('strategy_params.candidates[0]', 'first_s'), warning('strategy_params.candidates[2]', 'second_s')]);
    expect(readFileSync(config, 'utf8')).toBe(text);
  });

  it('says of a removed strategy id used as a member name (a weight per strategy) that it is a key there, not a value', async () => {
    home = demoHome();
    const env = home.env;
    // A strategy whose params_schema marks each member name of weights as a strategy id.
    const weighted = writeBundle(join(home.root, 'weighted'), {
      files: {
        'main.py': [
          'from gobstopper_sdk import STRATEGY_ID_FORMAT, Plugin',
          'plugin = Plugin("weighted", "1.0.0")',
          'SCHEMA = {"type": "object", "properties": {"weights": {"type": "object", "propertyNames": {"type": "string", "format": STRATEGY_ID_FORMAT}}}}',
          '@plugin.strategy("weighted_s", description="weighs strategies", kind="selector", params_schema=SCHEMA)',
          'def propose(params, ctx):',
          '    return {"edits": [], "rationale": "nothing"}',
          'plugin.serve()',
          '',
        ].join('\n'),
        'gobstopper_sdk.py': readFileSync(join(root, 'sdk', 'python', 'gobstopper_sdk.py')),
      },
      manifest: { id: 'weighted', provides: { strategies: ['weighted_s'] }, runtime: 'python3', executable: 'main.py' },
    });
    const pair = writeBundle(join(home.root, 'pair'), { files: { 'main.mjs': 'x' }, manifest: { id: 'pair', provides: { strategies: ['first_s', 'second_s'] } } });
    for (const dir of [weighted, pair]) expect((await runJson(['plugin', 'add', dir], env)).code).toBe(0);
    const config = join(home.configHome, 'gobstopper', 'config.toml');
    writeFileSync(config, '[policy]\nstrategy = "weighted_s"\ntrigger_tokens = 20000\nfloor_tokens = 8000\nstrategy_params = { weights = { first_s = 2, elide = 1 } }\n');
    const removed = await runJson(['plugin', 'remove', 'pair'], env);
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.json.warnings).toEqual([
      `the key "first_s" of strategy_params.weights in [policy] of ${config} (a strategy id for weighted_s) was served by the removed pair@1.0.0; nothing serves it now, so plan refuses that table until it names another strategy there`,
    ]);
  });

  it('removes the bundle when a strategy whose params hold a removed id cannot be started to check them, and says so once', async () => {
    home = demoHome();
    const env = home.env;
    // A bundle that exits before its handshake: its params_schema cannot be asked for.
    const broken = writeBundle(join(home.root, 'broken'), { files: { 'main.mjs': 'process.exit(3)\n' }, manifest: { id: 'broken', provides: { strategies: ['broken_s'] } } });
    for (const dir of [broken, join(root, 'examples', 'plugins', 'keep-last-python')]) expect((await runJson(['plugin', 'add', dir], env)).code).toBe(0);
    const config = join(home.configHome, 'gobstopper', 'config.toml');
    const text =
      '[policy]\nstrategy = "compacted"\ntrigger_tokens = 20000\nfloor_tokens = 8000\n\n' +
      '[presets.a]\nstrategy = "broken_s"\nstrategy_params = { next = "keep_last_py" }\n\n[presets.b]\nstrategy = "broken_s"\nstrategy_params = { then = ["keep_last_py"] }\n';
    writeFileSync(config, text);
    const removed = await runJson(['plugin', 'remove', 'keep-last-python'], env);
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.json.removed).toEqual([expect.objectContaining({ id: 'keep-last-python' })]);
    expect(removed.json.warnings).toEqual([expect.stringMatching(/^the strategy_params of \[presets\.a\], \[presets\.b\] could not be checked for strategy ids the removed bundles served: /)]);
    expect(readFileSync(config, 'utf8')).toBe(text);
    const list = await runJson<{ bundles: { id: string }[] }>(['plugin', 'list'], env);
    expect(list.json.bundles.map((b) => b.id)).not.toContain('keep-last-python');
  });

  it('says nothing when the config names none of it, and still removes it when the config cannot be read', async () => {
    home = demoHome();
    const env = home.env;
    expect((await runJson(['plugin', 'add', join(root, 'examples', 'plugins', 'keep-last-jq')], env)).code).toBe(0);
    const quiet = await runJson(['plugin', 'remove', 'keep-last-jq'], env);
    expect(quiet.json).toEqual({ removed: [expect.objectContaining({ id: 'keep-last-jq' })], warnings: [] });

    expect((await runJson(['plugin', 'add', join(root, 'examples', 'plugins', 'keep-last-jq')], env)).code).toBe(0);
    const config = join(home.configHome, 'gobstopper', 'config.toml');
    writeFileSync(config, '[policy]\ntrigger_tokens = "many"\n');
    const broken = await runJson(['plugin', 'remove', 'keep-last-jq'], env);
    expect(broken.code).toBe(0);
    expect(broken.json.removed).toEqual([expect.objectContaining({ id: 'keep-last-jq' })]);
    expect(broken.json.warnings).toEqual([expect.stringMatching(new RegExp(`^the config could not be read to check what still names keep-last-jq: .*${config.replace(/[.]/g, '\\.')}`))]);
    // A --config that is not there is the command line's mistake: nothing is removed.
    expect((await runJson(['plugin', 'add', join(root, 'examples', 'plugins', 'keep-last-jq')], env)).code).toBe(0);
    const missing = await runJson(['plugin', 'remove', 'keep-last-jq', '--config', join(home.root, 'nope.toml')], env);
    expect({ code: missing.code, error: missing.json.error.code }).toEqual({ code: 2, error: 'config_not_found' });
    const list = await runJson<{ bundles: { id: string }[] }>(['plugin', 'list', '--config', join(home.root, 'nope.toml')], env);
    expect(list.code).toBe(2);
    writeFileSync(config, '');
    expect((await runJson<{ bundles: { id: string }[] }>(['plugin', 'list'], env)).json.bundles.map((b) => b.id)).toContain('keep-last-jq');
  });
});
