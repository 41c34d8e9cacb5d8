/** Shared helpers for the provider-claude unit tests: temporary files and one-call wrappers. */
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import type { Edit, ProviderRenderResult, Transcript } from '../../../schemas/generated/types.js';
import { parseTranscript } from '../../../plugins/provider-claude-code/src/parse.js';
import { renderCandidate, type RenderHooks } from '../../../plugins/provider-claude-code/src/render.js';
import { verifyTranscript } from '../../../plugins/provider-claude-code/src/verify.js';
import { branchedSession, compactedSession, modernSession, oldSession } from '../../fixtures/claude/sessions.js';
import { spreadSessionLines } from '../../fixtures/claude/spread-session.js';

/** A scratch directory removed after the test file. */
export function scratch(prefix: string): { dir: string; file(name: string, text: string | Buffer): string } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  let n = 0;
  return {
    dir,
    file(name: string, text: string | Buffer) {
      const path = join(dir, `${n++}-${name}`);
      writeFileSync(path, text);
      return path;
    },
  };
}

export const parse = (path: string, extra: { expected_sha256?: string; max_bytes?: number; max_records?: number } = {}): Promise<Transcript> =>
  parseTranscript({ provider_id: 'claude_code', path, ...extra });

export const verify = (path: string) => verifyTranscript({ provider_id: 'claude_code', path });

export const errors = async (path: string) => (await verify(path)).findings.filter((f) => f.severity === 'error');

/** An empty private staging file, as the host creates it. */
export function staging(dir: string, name = 'staging.jsonl'): string {
  const path = join(dir, `${Date.now()}-${Math.random().toString(16).slice(2)}-${name}`);
  closeSync(openSync(path, 'wx', 0o600));
  return path;
}

export async function render(
  dir: string,
  source: string,
  sha: string,
  edits: Edit[],
  options: { newSessionId?: string | null; now?: string; hooks?: RenderHooks } = {},
): Promise<{ result: ProviderRenderResult; path: string }> {
  const path = staging(dir);
  const result = await renderCandidate(
    {
      provider_id: 'claude_code',
      path: source,
      source_sha256: sha,
      edits,
      staging_path: path,
      new_session_id: options.newSessionId ?? null,
      now: options.now ?? '2026-03-01T10:00:00.000Z',
    },
    options.hooks,
  );
  return { result, path };
}

export const STUB = '[output elided by gobstopper: {bytes} bytes]';

/**
 * One session of each kind the renders and verifies must agree on with a full read: a modern one,
 * a branched one, one after a compaction, an old-format one, and one spread over many records.
 */
export function everyKindOfSession(): string[] {
  return [modernSession().toJsonl(), branchedSession().b.toJsonl(), compactedSession().b.toJsonl(), oldSession().b.toJsonl(), spreadSessionLines().join('\n') + '\n'];
}
