/**
 * A refused plan, as a user meets it: one line naming the rule, what broke it and by how much, and
 * the same facts in --json details. The proposals come from a trusted legacy command that prints
 * whatever the test wrote, over the demo Claude Code session.
 */
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireBuilt, runCli, runJson } from '../helpers/cli.js';
import { demoHome } from '../helpers/demo-home.js';


let home: ReturnType<typeof demoHome>;
let printed: string;

beforeAll(() => {
  home = demoHome();
  printed = join(home.root, 'printed.json');
  const script = join(home.root, 'print-edits.sh');
  writeFileSync(script, `#!/bin/sh\ncat >/dev/null\ncat ${JSON.stringify(printed)}\n`);
  chmodSync(script, 0o755);
  writeFileSync(
    join(home.configHome, 'gobstopper', 'config.toml'),
    `[policy]\ntrigger_tokens = 20000\nfloor_tokens = 8000\n\n[presets.u]\ncommand = ${JSON.stringify(script)}\ntrusted_legacy_command = true\n`,
  );
});
afterAll(() => home.cleanup());

async function refused(edits: unknown[]) {
  writeFileSync(printed, JSON.stringify({ edits }));
  const human = await runCli(['plan', '7d3f', '--preset', 'u'], home.env);
  expect(human.code, human.stdout).toBe(1);
  const { json } = await runJson(['plan', '7d3f', '--preset', 'u'], home.env);
  return { line: human.stderr, error: json.error };
}

const stub = (template: string) => ({ op: 'elide', line_indexes: [5, 9, 12], stub_template: template });
const card = (text: string) => ({ op: 'inject_digest', digest: { goal: text, covers_items: 3 } });

describe('a refused plan says which rule it broke and by how much', () => {
  requireBuilt('dist/kernel/cli/commands/plan.js');
  it('a stub template over the limit', async () => {
    const { line, error } = await refused([stub(`${'x'.repeat(300)} {bytes}`)]);
    expect(line).toBe('gobstopper: invalid elision bounds or stub template: stub template is 308 bytes; the limit is 96 (edit 0, proposed by the command of [presets.u])\n');
    expect(error).toEqual({
      code: 'invalid_elision_bounds',
      message: 'invalid elision bounds or stub template: stub template is 308 bytes; the limit is 96',
      details: { rule: 'invalid_elision_bounds', why: 'stub template is 308 bytes; the limit is 96', edit_index: 0, proposer: 'command of [presets.u]' },
    });
  });

  it('a second state card', async () => {
    const { line, error } = await refused([stub('[x {bytes}]'), card('a'), card('b')]);
    expect(line).toBe('gobstopper: invalid edit composition: a plan may hold one inject_digest (state card); edit 2 is a second (proposed by the command of [presets.u])\n');
    expect(error.details).toMatchObject({ rule: 'invalid_edit_composition', edit_index: 2, why: 'a plan may hold one inject_digest (state card); edit 2 is a second' });
  });

  it('a state card over 32 KiB', async () => {
    const { line, error } = await refused([stub('[x {bytes}]'), card('y'.repeat(40_003))]);
    expect(line).toBe('gobstopper: invalid digest bounds: state card is 40,003 bytes; the limit is 32,768 (edit 1, proposed by the command of [presets.u])\n');
    expect(error.details).toMatchObject({ digest_bytes: 40_003, why: 'state card is 40,003 bytes; the limit is 32,768' });
  });

  it('protected_or_non_elidable says which of its two rules applies', async () => {
    const tail = await refused([{ op: 'elide', line_indexes: [187], stub_template: '[x]' }]);
    expect(tail.line).toBe(
      'gobstopper: edit targets protected or non-elidable content: line 188 is in the protected tail: keep_recent_tool_outputs = 8 keeps the newest 8 tool outputs (edit 0, proposed by the command of [presets.u])\n',
    );
    expect(tail.error).toMatchObject({ code: 'protected_or_non_elidable', details: { line_index: 187, why_code: 'protected_tail' } });
    const header = await refused([{ op: 'elide', line_indexes: [0], stub_template: '[x]' }]);
    expect(header.line).toMatch(/^gobstopper: edit targets protected or non-elidable content: line 1 holds nothing elidable: it is a \w+ record/);
    expect(header.error).toMatchObject({ code: 'protected_or_non_elidable', details: { line_index: 0, why_code: 'non_elidable' } });
  });
});
