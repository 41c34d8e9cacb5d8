/** Every command's --config help names the file it replaces as the code finds it: under $XDG_CONFIG_HOME. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const manifest = JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', '..', 'oclif.manifest.json'), 'utf8')) as {
  commands: Record<string, { flags: Record<string, { summary?: string; helpValue?: string }> }>;
};

describe('--config help', () => {
  const withConfig = Object.entries(manifest.commands).filter(([, command]) => command.flags.config !== undefined);

  it('is the same sentence on every command that takes it, plan, apply and tune included', () => {
    expect(withConfig.map(([id]) => id)).toEqual(expect.arrayContaining(['plan', 'apply', 'tune', 'eval', 'config', 'explain', 'presets', 'policy-check']));
    for (const [id, command] of withConfig) {
      expect(command.flags.config!.summary, id).toBe('Config file to use instead of $XDG_CONFIG_HOME/gobstopper/config.toml.');
      expect(command.flags.config!.helpValue, id).toBe('<path>');
    }
  });
});
