import { createHash } from 'node:crypto';
import { appendFileSync, existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { applySession } from '../../kernel/services/apply.js';
import { forkSession } from '../../kernel/services/fork.js';
import { withRuntime } from '../../kernel/services/runtime.js';
import { snapshotSession } from '../../kernel/services/snapshot.js';
import { undo } from '../../kernel/services/undo.js';
import { readIndex } from '../../kernel/vault/index-file.js';
import { vaultLayout } from '../../kernel/vault/layout.js';
import { DEMO_CLAUDE_ID, demoHome, listFiles } from '../helpers/demo-home.js';

let home: ReturnType<typeof demoHome> | undefined;
afterEach(() => home?.cleanup());

/** A fresh demo home whose Claude session gets `line` appended when a run reaches fault step `at`. */
function appendingAt(at: string, line: string) {
  home = demoHome();
  const h = home;
  const fault = (step: string) => {
    if (step === at) appendFileSync(h.claudeSession, line);
  };
  return { h, before: listFiles(h.claudeDir), fault, env: { ...process.env, ...h.env } };
}

describe('apply binds every write to the planned source', () => {
  it.each([
    // The client appends a record after the candidate was rendered and its receipt written,
    ['after the receipt', 'apply.after_receipt'],
    // or while the staged fork is flushed to disk, the last wait before the link.
    ['while the fork is flushed', 'apply.after_flush'],
  ])('a session that changes between plan and publish (%s) is refused, and nothing is published', async (_when, step) => {
    const appended = '{"type":"summary","summary":"written while gobstopper was working"}\n';
    const { h, before, fault, env } = appendingAt(step, appended);
    const run = withRuntime({ env }, (rt) => applySession(rt, DEMO_CLAUDE_ID, { fault }));
    await expect(run).rejects.toMatchObject({ code: 'source_changed' });
    expect(listFiles(h.claudeDir)).toEqual(before);
    expect(readFileSync(h.claudeSession, 'utf8').endsWith(appended)).toBe(true);
    // The receipt written for the publication goes with it: a pending one would stand for an
    // operation no run can finish (the source it names is gone).
    expect(listFiles(join(h.dataHome, 'gobstopper', 'vault', 'operations')).filter((f) => f.endsWith('.json'))).toEqual([]);
  });

  it('a session removed between plan and publish is said to be gone, not to have changed', async () => {
    home = demoHome();
    const h = home;
    const fault = (step: string) => {
      if (step === 'apply.after_receipt') rmSync(h.claudeSession);
    };
    const run = withRuntime({ env: { ...process.env, ...h.env } }, (rt) => applySession(rt, DEMO_CLAUDE_ID, { fault }));
    await expect(run).rejects.toMatchObject({ code: 'source_changed', details: { gone: true }, message: `${h.claudeSession} was removed (or replaced by something that is not a file) after it was read; nothing was published` });
    expect(listFiles(h.claudeDir)).toEqual([]);
  });
});

describe('fork reads one version of the source', () => {
  it('a session the client appends to while fork reads it is refused before anything is recorded', async () => {
    // A record the client could not resume from: checked against the version fork hashed, it
    // would read as an error the fork adds.
    const appended = '{"type":"user","uuid":"written-late","parentUuid":"no-such-parent","message":{"role":"user","content":"hi"}}\n';
    const { h, before, fault, env } = appendingAt('fork.after_hash', appended);
    const run = withRuntime({ env }, (rt) => forkSession(rt, DEMO_CLAUDE_ID, { fault }));
    await expect(run).rejects.toMatchObject({ code: 'source_changed', message: expect.stringContaining('nothing was recorded') });
    expect(listFiles(h.claudeDir)).toEqual(before);
    const vault = join(h.dataHome, 'gobstopper', 'vault');
    expect(existsSync(join(vault, 'index.jsonl')) ? readFileSync(join(vault, 'index.jsonl'), 'utf8') : '').toBe('');
    expect(existsSync(join(vault, 'manifests')) ? listFiles(join(vault, 'manifests')) : []).toEqual([]);
  });
});

describe('undo archives the current file whole', () => {
  it('a session the client appends to while undo archives it is read again, and the restore goes ahead', async () => {
    home = demoHome();
    const h = home;
    const env = { ...process.env, ...h.env };
    const archived = await withRuntime({ env }, (rt) => snapshotSession(rt, DEMO_CLAUDE_ID));
    appendFileSync(h.claudeSession, '{"type":"summary","summary":"written after the snapshot"}\n');
    // The client appends again while undo's first read of the current file is going on.
    let reads = 0;
    const fault = (step: string) => {
      if (step === 'vault.after_read' && ++reads === 1) appendFileSync(h.claudeSession, '{"type":"summary","summary":"written while undo read"}\n');
    };
    const result = await withRuntime({ env }, (rt) => undo(rt, DEMO_CLAUDE_ID, { sha: archived.entry.sha256, fault }));
    expect(reads).toBeGreaterThanOrEqual(2);
    expect(result.restored.sha256).toBe(archived.entry.sha256);
    // The way back is the file as it is now, both appended records included.
    const now = readFileSync(h.claudeSession);
    const preUndo = (await readIndex(vaultLayout(env))).find((e) => e.sha256 === result.pre_undo_snapshot);
    expect(preUndo).toMatchObject({ strategy: 'pre-undo', bytes: now.length, source_sha256: createHash('sha256').update(now).digest('hex') });
    expect(readFileSync(result.receipt.path).length).toBe(archived.entry.bytes);
  });
});
