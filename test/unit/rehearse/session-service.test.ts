import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { rehearseSession, type RehearsalRuntime } from '../../../kernel/rehearse/session.js';
import type { SessionHandle, Transcript, TranscriptItem } from '../../../schemas/generated/types.js';
import { validateRehearseCommandResult } from '../../../schemas/generated/validators.js';
import { writeFakeClient } from './fake-clients.js';
import { writeClaudeSession } from './transcripts.js';

const dir = mkdtempSync(join(tmpdir(), 'gob-rehearse-service-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A provider that recognises the files it was given and predicts each record as the message it holds. */
function fakeRuntime(provider: string, sessions: SessionHandle[]): RehearsalRuntime {
  const byPath = new Map(sessions.map((s) => [s.path, s]));
  const port = {
    id: provider,
    discover: async () => ({ sessions: [] }),
    identify: async ({ path }: { path: string }) => ({ matches: byPath.has(path), session: byPath.get(path) ?? null }),
  };
  return {
    env: { PATH: process.env.PATH ?? '' },
    homes: {},
    providers: async () => [port],
    provider: async () => ({
      parse: async ({ path }: { path: string }): Promise<Transcript> => {
        const lines = readFileSync(path, 'utf8').split('\n').filter(Boolean);
        const items: TranscriptItem[] = lines.map((line, i) => {
          const message = (JSON.parse(line) as { message: { content: { type: string; id?: string; tool_use_id?: string }[] } }).message;
          const ids = message.content.flatMap((b) => (b.type === 'tool_use' ? [b.id!] : b.type === 'tool_result' ? [b.tool_use_id!] : []));
          const kind = message.content.some((b) => b.type === 'tool_use') ? 'tool_call' : message.content.some((b) => b.type === 'tool_result') ? 'tool_result' : 'user';
          return { line_index: i, kind, est_tokens: Math.ceil(Buffer.byteLength(JSON.stringify(message)) / 4), label: kind, tool_use_ids: ids };
        });
        return {
          session: byPath.get(path)!,
          items,
          usage: { context_tokens: 0, lifetime_input_tokens: 0, lifetime_cached_tokens: 0, context_state: 'absent', lifetime_scope: 'absent' },
          source_sha256: '0'.repeat(64),
          bytes: 0,
          record_count: lines.length,
        };
      },
    }),
  };
}

describe('rehearse <session> as a service', () => {
  it('resolves a path through the providers, predicts from the parse and passes', async () => {
    const session = writeClaudeSession(dir, randomUUID());
    const handle: SessionHandle = { provider: 'claude_code', session_id: session.sessionId, path: session.path, cwd: '/home/u/proj' };
    const report = await rehearseSession(fakeRuntime('claude_code', [handle]), session.path, { claudeBin: writeFakeClient(dir, 'claude', 'ok'), timeoutMs: 20_000 });
    expect(report.status, report.reason).toBe('passed');
    expect(report.prediction_basis).toBe('direct');
    expect(report.predicted?.tool_calls).toBe(2);
    const { workDir: _w, ...rehearsal } = report;
    expect(validateRehearseCommandResult({ rehearsal })).toBe(true);
  });

  it('rehearses a fork against its baseline session', async () => {
    const source = writeClaudeSession(dir, randomUUID());
    const fork = writeClaudeSession(join(dir), randomUUID());
    const handles: SessionHandle[] = [
      { provider: 'claude_code', session_id: source.sessionId, path: source.path },
      { provider: 'claude_code', session_id: fork.sessionId, path: fork.path },
    ];
    const report = await rehearseSession(fakeRuntime('claude_code', handles), fork.path, { baseline: source.path, claudeBin: writeFakeClient(dir, 'claude', 'ok'), timeoutMs: 20_000 });
    expect(report.status, report.reason).toBe('passed');
    expect(report.prediction_basis).toBe('baseline');
    expect(report.baseline?.messages).toBe(8);
  });

  it('refuses providers it cannot rehearse', async () => {
    const session = writeClaudeSession(dir, randomUUID());
    const handle: SessionHandle = { provider: 'devin', session_id: session.sessionId, path: session.path };
    await expect(rehearseSession(fakeRuntime('devin', [handle]), session.path)).rejects.toMatchObject({
      code: 'rehearsal_unsupported',
      exit: 2,
      message: 'resume rehearsal supports claude_code and codex sessions, not devin',
    });
  });
});
