import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkConfigData, type LoadedConfig } from '../../../kernel/config/load-config.js';
import { parseConfigToml } from '../../../kernel/config/read-config-file.js';
import { resolveConfig } from '../../../kernel/config/resolve-config.js';
import { PluginRegistry } from '../../../kernel/plugins/registry/registry.js';
import { configProblems } from '../../../kernel/services/config-problems.js';

const PATH = '/home/u/.config/gobstopper/config.toml';
const dataDir = mkdtempSync(join(tmpdir(), 'gob-problems-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

function loaded(toml: string): LoadedConfig {
  return { user: { scope: 'user', path: PATH, loaded: true, data: checkConfigData(parseConfigToml(toml, PATH), 'user', PATH) }, project: null };
}

const problems = (toml: string) => configProblems(loaded(toml), new PluginRegistry({ dataDir }));

describe('configProblems', () => {
  it("does not call a session table refused when its provider's table makes it resolve, as plan layers it", async () => {
    const text = '[policy]\ntrigger_tokens = 20000\nfloor_tokens = 8000\n[provider.claude_code]\ntrigger_tokens = 30000\n[sessions."s-1"]\nfloor_tokens = 25000\n';
    // plan resolves a Claude Code session's table over [provider.claude_code]: it is accepted.
    expect(resolveConfig(loaded(text), { provider: 'claude_code', session_id: 's-1' }).values.floor_tokens).toBe(25000);
    // So only the sessions of other providers would be refused, and the warning says which.
    expect(await problems(text)).toEqual([
      '[sessions."s-1"] (for a session of any provider but claude_code): invalid policy bounds: floor_tokens (25000) must be below trigger_tokens (20000) ' +
        `[floor_tokens: [sessions."s-1"] in ${PATH}; trigger_tokens: [policy] in ${PATH}]`,
    ]);
  });

  it('still reports a session table no provider table rescues, unqualified', async () => {
    const text = '[policy]\ntrigger_tokens = 20000\nfloor_tokens = 8000\n[provider.codex]\ntrigger_tokens = 21000\n[sessions."s-1"]\nfloor_tokens = 25000\n';
    expect(await problems(text)).toEqual([expect.stringMatching(/^\[sessions\."s-1"\]: invalid policy bounds: floor_tokens \(25000\)/)]);
  });

  it('names each table as the file writes it, quoting a preset name with a dot and a session id with a quote', async () => {
    const text = '[presets."deep.work"]\nstrategy = "nosuch"\n[sessions."a\\"b"]\nstrategy = "nosuch2"\n';
    // [presets.deep.work] would be a table "work" inside a preset "deep".
    expect(await problems(text)).toEqual([
      expect.stringMatching(/^\[presets\."deep\.work"\]: unknown strategy 'nosuch'/),
      expect.stringMatching(/^\[sessions\."a\\"b"\]: unknown strategy 'nosuch2'/),
    ]);
  });
});
