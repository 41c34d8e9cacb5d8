/**
 * GOBSTOPPER_PROFILE_PLUGINS: a node plugin started by the host writes a V8 CPU profile into the
 * named folder when it exits, and nothing is written without it.
 */
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { admitBundle } from '../../kernel/plugins/admission/admit.js';
import { startBundle } from '../../kernel/plugins/host/running-bundle.js';
import { StrategyPropose } from '../../sdk/protocol.js';
import { fixturePluginBundle, tempDir, type TempDir } from '../fixtures/bundles/build-bundle.js';
import { proposeParams, syntheticItems } from '../fixtures/bundles/propose-params.js';

describe('profiling plugin processes', () => {
  let dir: TempDir | undefined;
  afterEach(() => dir?.cleanup());

  async function runOnce(hostEnv: NodeJS.ProcessEnv): Promise<void> {
    const root = fixturePluginBundle(join(dir!.path, 'bundle'), 'misbehaving-strategy.mjs', { args: ['ok'] });
    const running = await startBundle(admitBundle(root), { hostVersion: '0.1.0', hostEnv });
    try {
      await running.channel.request(StrategyPropose, proposeParams('fixture_strategy', syntheticItems(3)));
    } finally {
      await running.channel.close();
    }
  }

  it('writes one CPU profile per plugin process into the folder GOBSTOPPER_PROFILE_PLUGINS names', async () => {
    dir = tempDir();
    const profiles = join(dir.path, 'profiles');
    mkdirSync(profiles);
    await runOnce({ ...process.env, GOBSTOPPER_PROFILE_PLUGINS: profiles });
    const written = readdirSync(profiles).filter((name) => name.endsWith('.cpuprofile'));
    expect(written).toHaveLength(1);
    const profile = JSON.parse(readFileSync(join(profiles, written[0]!), 'utf8')) as { nodes?: unknown[]; samples?: unknown[] };
    expect(profile.nodes?.length).toBeGreaterThan(0);
  });

  it('writes none without it', async () => {
    dir = tempDir();
    const env = { ...process.env };
    delete env.GOBSTOPPER_PROFILE_PLUGINS;
    await runOnce(env);
    expect(readdirSync(dir.path).filter((name) => name.endsWith('.cpuprofile'))).toEqual([]);
    expect(readdirSync(join(dir.path, 'bundle')).filter((name) => name.endsWith('.cpuprofile'))).toEqual([]);
  });
});
