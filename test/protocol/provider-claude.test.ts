import { closeSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { claudeCodePlugin } from '../../plugins/provider-claude-code/src/plugin.js';
import * as P from '../../sdk/protocol.js';
import type { ProviderDiscoverResult, ProviderForkTargetResult, ProviderRenderResult, ProviderVerifyResult, Transcript } from '../../schemas/generated/types.js';
import { breakages } from '../fixtures/claude/breakages.js';
import { modernSession } from '../fixtures/claude/sessions.js';
import { checkedCall as call } from '../helpers/checked-call.js';
import { connectInMemory } from '../helpers/memory-connection.js';
import { makeTempHome, type TempHome } from '../helpers/temp-home.js';
import { elidableLines } from '../helpers/elide-targets.js';


const SESSION = '3f0c2a9e-5b1d-4c7e-9a2f-0d6b8e4c1a7f';
const FORK = '9e8d7c6b-5a4f-4e3d-8c2b-1a0f9e8d7c6b';

let home: TempHome;
let conn: ReturnType<typeof connectInMemory>;
let sessionPath: string;
beforeEach(() => {
  home = makeTempHome('claude-proto-');
  conn = connectInMemory(claudeCodePlugin);
  const dir = join(home.claudeHome, 'projects', '-home-dev-projects-demo');
  mkdirSync(dir, { recursive: true });
  sessionPath = join(dir, `${SESSION}.jsonl`);
  writeFileSync(sessionPath, modernSession({ sessionId: SESSION }).toJsonl());
});
afterEach(() => {
  conn.dispose();
  home.cleanup();
});

describe('provider-claude-code over the plugin protocol', () => {
  it('introduces itself as the claude_code provider', async () => {
    const init = await conn.host.sendRequest(P.Initialize, { protocol_versions: [1], host: { name: 'test', version: '0' } });
    expect(init.plugin).toEqual({ id: 'provider-claude-code', version: '0.1.0' });
    expect(init.providers).toEqual([{ id: 'claude_code', display_name: 'Claude Code', native_control: '/compact', supports_cache_edit: true }]);
  });

  it('discovers, parses, verifies, forks and renders a session end to end', async () => {
    const found = await call<ProviderDiscoverResult>(conn, P.Methods.providerDiscover, { provider_id: 'claude_code', home: home.claudeHome });
    expect(found.sessions.map((s) => s.session.session_id)).toEqual([SESSION]);
    const t = await call<Transcript>(conn, P.Methods.providerParse, { provider_id: 'claude_code', path: sessionPath });
    expect(t.usage.context_tokens).toBe(found.sessions[0]!.usage!.context_tokens);
    const v = await call<ProviderVerifyResult>(conn, P.Methods.providerVerify, { provider_id: 'claude_code', path: sessionPath });
    expect(v).toEqual({ findings: [], record_count: t.record_count, session_kind: 'session' });
    const target = await call<ProviderForkTargetResult>(conn, P.Methods.providerForkTarget, {
      provider_id: 'claude_code',
      path: sessionPath,
      session_id: SESSION,
      new_session_id: FORK,
      now: '2026-03-01T00:00:00.000Z',
    });
    // By absolute path: the client then finds the fork from any directory.
    expect(target.resume_command).toEqual(['claude', '--resume', target.target_path]);
    // The host creates the staging file; the provider only fills it.
    const stagingPath = `${target.target_path}.staging`;
    closeSync(openSync(stagingPath, 'wx', 0o600));
    const elidable = elidableLines(t.items);
    const rendered = await call<ProviderRenderResult>(conn, P.Methods.providerRender, {
      provider_id: 'claude_code',
      path: sessionPath,
      source_sha256: t.source_sha256,
      edits: [
        { op: 'elide', line_indexes: elidable, stub_template: '[output elided by gobstopper: {bytes} bytes]' },
        { op: 'inject_digest', digest: { goal: 'Fix the parser', covers_items: elidable.length } },
      ],
      staging_path: stagingPath,
      new_session_id: FORK,
      now: '2026-03-01T00:00:00.000Z',
    });
    expect(rendered).toMatchObject({ elided_records: elidable.length, appended_records: 2 });
    expect(readFileSync(stagingPath).length).toBe(rendered.bytes);
    const candidate = await call<ProviderVerifyResult>(conn, P.Methods.providerVerify, { provider_id: 'claude_code', path: stagingPath });
    expect(candidate.findings).toEqual([]);
  });

  it('answers identify and usage from the file ends', async () => {
    const id = await call<{ matches: boolean }>(conn, P.Methods.providerIdentify, { provider_id: 'claude_code', path: sessionPath });
    expect(id.matches).toBe(true);
    const usage = await call<{ usage: { context_state: string }; bytes_read: number }>(conn, P.Methods.providerUsage, { provider_id: 'claude_code', path: sessionPath });
    expect(usage.usage.context_state).toBe('reported');
  });

  it('carries input errors as protocol error codes', async () => {
    await expect(conn.host.sendRequest(P.Methods.providerParse, { provider_id: 'claude_code', path: join(home.root, 'missing.jsonl') })).rejects.toMatchObject({
      code: P.PluginErrorCodes.InvalidInput,
    });
    await expect(
      conn.host.sendRequest(P.Methods.providerParse, { provider_id: 'claude_code', path: sessionPath, expected_sha256: '0'.repeat(64) }),
    ).rejects.toMatchObject({ code: P.PluginErrorCodes.SourceChanged });
    await expect(conn.host.sendRequest(P.Methods.providerParse, { provider_id: 'claude_code', path: sessionPath, max_records: 3 })).rejects.toMatchObject({
      code: P.PluginErrorCodes.LimitExceeded,
    });
    await expect(conn.host.sendRequest(P.Methods.providerParse, { provider_id: 'codex', path: sessionPath })).rejects.toMatchObject({
      code: P.PluginErrorCodes.NotSupported,
    });
  });

  it('reports a broken chain as verify findings over the wire', async () => {
    const broken = breakages().find((b) => b.code === 'dropped_history')!;
    writeFileSync(sessionPath, broken.text);
    const v = await call<ProviderVerifyResult>(conn, P.Methods.providerVerify, { provider_id: 'claude_code', path: sessionPath });
    expect(v.findings.filter((f) => f.severity === 'error').map((f) => f.code)).toEqual(['dropped_history']);
  });
});
