import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import * as validators from '../../schemas/generated/validators.js';
import { runCli, runJson } from '../helpers/cli.js';
import { DEMO_CLAUDE_ID, DEMO_CODEX_ID, demoHome } from '../helpers/demo-home.js';

const root = join(import.meta.dirname, '..', '..');
type Home = ReturnType<typeof demoHome>;
let home: Home | undefined;
afterEach(() => home?.cleanup());

const configPath = (h: Home) => join(h.configHome, 'gobstopper', 'config.toml');
const manifestSha = (dir: string) => createHash('sha256').update(readFileSync(join(dir, 'gobstopper-plugin.json'))).digest('hex');

/** A copy of an example bundle outside the data directory, as a config pin names one. */
function copyOf(h: Home, example: string): string {
  const dir = join(h.root, `pinned-${example}`);
  cpSync(join(root, 'examples', 'plugins', example), dir, { recursive: true });
  return dir;
}

/** A demo home with copies of two example bundles to pin, and a config built from their pins. */
function homeWithCopies(configText: (copies: { keepLast: string; elide: string }) => string) {
  home = demoHome();
  const copies = { keepLast: copyOf(home, 'keep-last-python'), elide: copyOf(home, 'elide-python') };
  const config = configPath(home);
  writeFileSync(config, configText(copies));
  return { home, config, ...copies };
}

const pin = (dir: string, sha = manifestSha(dir)) => `plugin = { manifest = ${JSON.stringify(join(dir, 'gobstopper-plugin.json'))}, trusted_sha256 = "${sha}" }`;

interface ListEntry {
  id: string;
  source: string;
  status: string;
  path: string;
  error: { code: string } | null;
  shadowed: { kind: string; provided_id: string; by: string; by_path: string; table?: string }[];
  pinned_in: { path: string; table: string; strategy: string | null; provider?: string }[];
}

describe('bundles pinned in the config', () => {
  it('plugin list and inspect show a pinned bundle as the config source, and what it takes over where its table applies', async () => {
    const { home, config, keepLast, elide } = homeWithCopies(
      (c) => `[policy]\nstrategy = "keep_last_py"\ntrigger_tokens = 20000\nfloor_tokens = 8000\n${pin(c.keepLast)}\n\n[presets.py]\nstrategy = "elide"\n${pin(c.elide)}\n`,
    );
    // The same bundle installed too: the pin is what plan runs for keep_last_py.
    expect((await runJson(['plugin', 'add', join(root, 'examples', 'plugins', 'keep-last-python')], home.env)).code).toBe(0);

    const list = await runJson<{ bundles: ListEntry[] }>(['plugin', 'list'], home.env);
    expect(list.code, list.stderr).toBe(0);
    expect(validators.validatePluginListCommandResult(list.json), JSON.stringify(validators.validatePluginListCommandResult.errors)).toBe(true);
    const configured = list.json.bundles.filter((b) => b.source === 'config');
    expect(configured).toEqual([
      expect.objectContaining({ id: 'keep-last-python', status: 'ok', path: keepLast, pinned_in: [{ path: config, table: '[policy]', strategy: 'keep_last_py' }] }),
      expect.objectContaining({ id: 'elide-python', status: 'ok', path: elide, pinned_in: [{ path: config, table: '[presets.py]', strategy: 'elide' }] }),
    ]);
    const installed = list.json.bundles.find((b) => b.source === 'installed' && b.id === 'keep-last-python')!;
    expect(installed.shadowed).toEqual([{ kind: 'strategy', provided_id: 'keep_last_py', by: 'keep-last-python@0.1.0', by_path: keepLast, table: `[policy] in ${config}` }]);
    const core = list.json.bundles.find((b) => b.id === 'strategies-core')!;
    expect(core.shadowed).toEqual([{ kind: 'strategy', provided_id: 'elide', by: 'elide-python@0.1.0', by_path: elide, table: `[presets.py] in ${config}` }]);
    expect(list.json.bundles.filter((b) => b.source !== 'config').every((b) => b.pinned_in.length === 0)).toBe(true);

    const human = await runCli(['plugin', 'list'], home.env);
    expect(human.stdout).toMatch(/^keep-last-python +0\.1\.0 +config +ok +strategy keep_last_py$/m);
    // The pin and the installed copy share keep-last-python@0.1.0: each note says which row it is about.
    expect(human.stdout).toContain(`keep-last-python@0.1.0 (config, ${keepLast}): runs strategy keep_last_py where [policy] of ${config} applies, pinned there by plugin\n`);
    expect(human.stdout).toContain(`keep-last-python@0.1.0 (installed): shadowed for strategy keep_last_py where [policy] in ${config} applies: the config pin in ${keepLast} proposes for it there\n`);
    expect(human.stdout).toContain(`strategies-core@0.1.0 (builtin): shadowed for strategy elide where [presets.py] in ${config} applies: the config pin in ${elide} proposes for it there\n`);

    // What plan runs agrees: the pin proposes for the policy's strategy.
    const plan = await runJson(['plan', DEMO_CLAUDE_ID], home.env);
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.json.plan.strategy).toBe('preset:keep_last_py');

    // inspect takes the pinned bundle's id before the installed one's, and says where it is pinned.
    const inspected = await runJson(['plugin', 'inspect', 'keep-last-python'], home.env);
    expect(inspected.code, inspected.stderr).toBe(0);
    expect(validators.validatePluginInspectCommandResult(inspected.json)).toBe(true);
    expect(inspected.json).toMatchObject({ source: 'config', path: keepLast, manifest_sha256: manifestSha(keepLast), pinned_in: [{ path: config, table: '[policy]', strategy: 'keep_last_py' }] });
    const inspectHuman = await runCli(['plugin', 'inspect', 'elide-python'], home.env);
    expect(inspectHuman.stdout).toContain(`elide-python 0.1.0 (config, ${elide})\n  runs strategy elide where [presets.py] of ${config} applies, pinned there by plugin\n`);
    // Not pinned: the installed copy, as before.
    writeFileSync(config, '[policy]\ntrigger_tokens = 20000\nfloor_tokens = 8000\n');
    const unpinned = await runJson(['plugin', 'inspect', 'keep-last-python'], home.env);
    expect(unpinned.json).toMatchObject({ source: 'installed', path: join(home.dataHome, 'gobstopper', 'plugins', 'keep-last-python', '0.1.0') });
    expect(unpinned.json.pinned_in).toBeUndefined();
  });

  it('pinned_in names the strategy plan proposes the pin for, with the table layered as plan layers it', async () => {
    const { home, config, keepLast, elide } = homeWithCopies(
      (c) =>
        `[policy]\nstrategy = "keep_last_py"\ntrigger_tokens = 20000\nfloor_tokens = 8000\n\n[provider.codex]\nstrategy = "elide"\n\n[presets.py]\n${pin(c.keepLast)}\n\n` +
        `[sessions."${DEMO_CLAUDE_ID}"]\nstrategy = "elide"\n${pin(c.elide)}\n`,
    );
    const list = await runJson<{ bundles: ListEntry[] }>(['plugin', 'list'], home.env);
    expect(list.code, list.stderr).toBe(0);
    expect(validators.validatePluginListCommandResult(list.json), JSON.stringify(validators.validatePluginListCommandResult.errors)).toBe(true);
    const session = `[sessions."${DEMO_CLAUDE_ID}"]`;
    // The preset sets no strategy: [policy]'s, and for codex sessions [provider.codex]'s, which the pin does not serve.
    expect(list.json.bundles.filter((b) => b.source === 'config').map((b) => [b.id, b.pinned_in])).toEqual([
      [
        'keep-last-python',
        [
          { path: config, table: '[presets.py]', strategy: 'keep_last_py' },
          { path: config, table: '[presets.py]', strategy: 'elide', provider: 'codex' },
        ],
      ],
      ['elide-python', [{ path: config, table: session, strategy: 'elide' }]],
    ]);
    const human = await runCli(['plugin', 'list'], home.env);
    expect(human.stdout).toContain(`keep-last-python@0.1.0 (config, ${keepLast}): runs strategy keep_last_py where [presets.py] of ${config} applies, pinned there by plugin\n`);
    expect(human.stdout).toContain(
      `keep-last-python@0.1.0 (config, ${keepLast}): pinned by plugin in [presets.py] over [provider.codex] of ${config}, where plan refuses it: the configured plugin keep-last-python does not serve strategy elide\n`,
    );
    // inspect says of each use what list says: never that it proposes for a strategy it does not serve.
    const inspected = await runCli(['plugin', 'inspect', 'keep-last-python'], home.env);
    expect(inspected.code, inspected.stderr).toBe(0);
    expect(inspected.stdout).toContain(
      `\n  runs strategy keep_last_py where [presets.py] of ${config} applies, pinned there by plugin\n` +
        `  pinned by plugin in [presets.py] over [provider.codex] of ${config}, where plan refuses it: the configured plugin keep-last-python does not serve strategy elide\n`,
    );
    expect(inspected.stdout).not.toContain('proposing for strategy elide');
    // Only where the pin serves the strategy does it take it over.
    const core = list.json.bundles.find((b) => b.id === 'strategies-core')!;
    expect(core.shadowed).toEqual([{ kind: 'strategy', provided_id: 'elide', by: 'elide-python@0.1.0', by_path: elide, table: `${session} in ${config}` }]);

    // What plan does agrees, table by table.
    expect((await runJson(['plan', DEMO_CLAUDE_ID, '--preset', 'py'], home.env)).json.plan.strategy).toBe('preset:elide');
    const codex = await runJson(['plan', DEMO_CODEX_ID, '--preset', 'py'], home.env);
    expect({ code: codex.code, message: codex.json.error.message }).toEqual({ code: 1, message: expect.stringContaining('the configured plugin keep-last-python does not serve strategy elide') });

    // No strategy anywhere on the path: the default, which plan refuses the pin for.
    writeFileSync(config, `[policy]\ntrigger_tokens = 20000\nfloor_tokens = 8000\n\n[presets.py]\n${pin(keepLast)}\n`);
    const unset = await runJson<{ bundles: ListEntry[] }>(['plugin', 'list'], home.env);
    expect(unset.json.bundles.find((b) => b.source === 'config')!.pinned_in).toEqual([{ path: config, table: '[presets.py]', strategy: 'auto' }]);
    expect((await runCli(['plugin', 'list'], home.env)).stdout).toContain(
      `keep-last-python@0.1.0 (config, ${keepLast}): pinned by plugin in [presets.py] of ${config}, where plan refuses it: the configured plugin keep-last-python does not serve strategy auto\n`,
    );
    const refused = await runJson(['plan', DEMO_CLAUDE_ID, '--preset', 'py'], home.env);
    expect(refused.json.error.message).toContain('the configured plugin keep-last-python does not serve strategy auto');
  });

  it('a pin whose manifest is gone or hashes to another sha256 is listed as missing or damaged, and inspect refuses to run it', async () => {
    home = demoHome();
    const keepLast = copyOf(home, 'keep-last-python');
    const config = configPath(home);
    const gone = join(home.root, 'gone');
    writeFileSync(
      config,
      `[presets.wrong]\nstrategy = "keep_last_py"\n${pin(keepLast, '0'.repeat(64))}\n\n[presets.gone]\nstrategy = "keep_last_py"\n${pin(gone, '1'.repeat(64))}\n\n` +
        `[presets.unresolved]\nstrategy = "keep_last_py"\ntrigger_tokens = 20000\nfloor_tokens = 30000\n${pin(keepLast, '0'.repeat(64))}\n`,
    );
    const list = await runJson<{ bundles: ListEntry[] }>(['plugin', 'list'], home.env);
    expect(list.code, list.stderr).toBe(0);
    expect(validators.validatePluginListCommandResult(list.json)).toBe(true);
    expect(list.json.bundles.filter((b) => b.source === 'config').map((b) => [b.path, b.status, b.error?.code])).toEqual([
      [keepLast, 'damaged', 'pin_mismatch'],
      [gone, 'missing', 'not_a_bundle'],
    ]);
    const human = await runCli(['plugin', 'list'], home.env);
    expect(human.stdout).toContain(`keep-last-python@0.1.0 (config, ${keepLast}): pinned by plugin in [presets.unresolved] of ${config}, but runs nothing there: that table does not resolve, or another proposer replaces the pin\n`);
    expect(human.stdout).toContain(`keep-last-python@0.1.0 (config, ${keepLast}): pinned by plugin in [presets.wrong] of ${config} for strategy keep_last_py; plan refuses that table while the pin is damaged\n`);
    expect(human.stdout).toContain(`gone (config, ${gone}): pinned by plugin in [presets.gone] of ${config} for strategy keep_last_py; plan refuses that table while the pin is missing\n`);
    expect(human.stdout).toContain(`gone (config, ${gone}): the configured plugin manifest ${join(gone, 'gobstopper-plugin.json')} does not exist\n`);
    const inspected = await runJson(['plugin', 'inspect', 'keep-last-python'], home.env);
    expect(inspected.code).toBe(1);
    expect(inspected.json.error.code).toBe('pin_mismatch');
    // plan with that table refuses it the same way.
    const plan = await runJson(['plan', DEMO_CLAUDE_ID, '--preset', 'wrong'], home.env);
    expect({ code: plan.code, error: plan.json.error.code }).toEqual({ code: 1, error: 'pin_mismatch' });
  });

  it('a pinned bundle changed after it was pinned says every step that mends it, and following them runs it again', async () => {
    home = demoHome();
    const keepLast = copyOf(home, 'keep-last-python');
    const config = configPath(home);
    writeFileSync(config, `[policy]\ntrigger_tokens = 20000\nfloor_tokens = 8000\n\n[presets.py]\nstrategy = "keep_last_py"\n${pin(keepLast)}\n`);
    writeFileSync(join(keepLast, 'main.py'), `${readFileSync(join(keepLast, 'main.py'), 'utf8')}# edited\n`);
    const changed = await runJson(['plan', DEMO_CLAUDE_ID, '--preset', 'py'], home.env);
    expect(changed.code).toBe(1);
    expect(changed.json.error.code).toBe('file_hash_mismatch');
    // Pinning the file again changes the manifest's hash, so the config's pin has to follow.
    expect(changed.json.error.message).toContain(`then set the config's trusted_sha256 to the manifest_sha256 that gobstopper plugin check ${keepLast} prints`);
    execFileSync(process.execPath, [join(root, 'examples', 'plugins', 'rehash.mjs'), keepLast]);
    const repinned = await runJson(['plan', DEMO_CLAUDE_ID, '--preset', 'py'], home.env);
    expect(repinned.json.error.code).toBe('pin_mismatch');
    const checked = await runJson<{ manifest_sha256: string }>(['plugin', 'check', keepLast], home.env);
    expect(repinned.json.error.message).toContain(`; if the change is yours, check the bundle (gobstopper plugin check ${keepLast}) and set trusted_sha256 to ${checked.json.manifest_sha256} (set by plugin: [presets.py] in ${config})`);
    writeFileSync(config, `[policy]\ntrigger_tokens = 20000\nfloor_tokens = 8000\n\n[presets.py]\nstrategy = "keep_last_py"\n${pin(keepLast, checked.json.manifest_sha256)}\n`);
    const mended = await runJson(['plan', DEMO_CLAUDE_ID, '--preset', 'py'], home.env);
    expect(mended.code, mended.stderr).toBe(0);
  });
});
