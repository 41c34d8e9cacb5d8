import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { applySession } from '../../kernel/services/apply.js';
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
