import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { saveOrWarn } from '../../../kernel/watch/state-save.js';
import { loadWatchState, watchStatePath } from '../../../kernel/watch/watch-state.js';
import { makeTempHome, type TempHome } from '../../helpers/temp-home.js';

let home: TempHome | undefined;
afterEach(() => home?.cleanup());

describe('saving the watch state', () => {
  it('warns of a state it cannot save, once while the failure lasts, and again once it came back', async () => {
    home = makeTempHome();
    const path = watchStatePath(home.env, 'all');
    const state = await loadWatchState(path, 1_800_000_000);
    mkdirSync(dirname(path), { mode: 0o700 });
    const block = () => mkdirSync(join(path, 'in-the-way'), { recursive: true });
    block();
    expect(await saveOrWarn(state)).toMatch(/^the watch state was not saved \(rename failed from .* to .*watch-state-all\.json: .*\(EISDIR\)\); /);
    expect(await saveOrWarn(state)).toBeNull();
    rmSync(path, { recursive: true });
    expect(await saveOrWarn(state)).toBeNull();
    expect(existsSync(path)).toBe(true);
    rmSync(path);
    block();
    expect(await saveOrWarn(state)).toMatch(/^the watch state was not saved /);
  });
});
