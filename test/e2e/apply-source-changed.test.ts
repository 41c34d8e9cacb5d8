import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { applySession } from '../../kernel/services/apply.js';
import { forkSession } from '../../kernel/services/fork.js';
import { withRuntime } from '../../kernel/services/runtime.js';
import { DEMO_CLAUDE_ID, demoHome, listFiles } from '../helpers/demo-home.js';

let home: ReturnType<typeof demoHome> | undefined;
afterEach(() => home?.cleanup());

describe('apply binds every write to the planned source', () => {
  it('a session that changes between plan and publish is refused, and nothing is published', async () => {
    home = demoHome();
    const h = home;
    const before = listFiles(h.claudeDir);
    const appended = '{"type":"summary","summary":"written while gobstopper was working"}\n';
    const run = withRuntime({ env: { ...process.env, ...h.env } }, (rt) =>
      applySession(rt, DEMO_CLAUDE_ID, {
        // The client appends a record after the candidate was rendered and its receipt written.
        fault: (step) => {
          if (step === 'apply.after_receipt') appendFileSync(h.claudeSession, appended);
        },
      }),
    );
    await expect(run).rejects.toMatchObject({ code: 'source_changed' });
    expect(listFiles(h.claudeDir)).toEqual(before);
    expect(readFileSync(h.claudeSession, 'utf8').endsWith(appended)).toBe(true);
    // The receipt written for the publication goes with it: a pending one would stand for an
    // operation no run can finish (the source it names is gone).
    expect(listFiles(join(h.dataHome, 'gobstopper', 'vault', 'operations')).filter((f) => f.endsWith('.json'))).toEqual([]);
  });
});

describe('fork reads one version of the source', () => {
  it('a session the client appends to while fork reads it is refused before anything is recorded', async () => {
    home = demoHome();
    const h = home;
    const before = listFiles(h.claudeDir);
    // A record the client could not resume from: checked against the version fork hashed, it
    // would read as an error the fork adds.
    const appended = '{"type":"user","uuid":"written-late","parentUuid":"no-such-parent","message":{"role":"user","content":"hi"}}\n';
    const run = withRuntime({ env: { ...process.env, ...h.env } }, (rt) =>
      forkSession(rt, DEMO_CLAUDE_ID, {
        fault: (step) => {
          if (step === 'fork.after_hash') appendFileSync(h.claudeSession, appended);
        },
      }),
    );
    await expect(run).rejects.toMatchObject({ code: 'source_changed', message: expect.stringContaining('nothing was recorded') });
    expect(listFiles(h.claudeDir)).toEqual(before);
    const vault = join(h.dataHome, 'gobstopper', 'vault');
    expect(existsSync(join(vault, 'index.jsonl')) ? readFileSync(join(vault, 'index.jsonl'), 'utf8') : '').toBe('');
    expect(existsSync(join(vault, 'manifests')) ? listFiles(join(vault, 'manifests')) : []).toEqual([]);
  });
});
