import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { codexPlugin } from '../../plugins/provider-codex/src/plugin.js';
import * as P from '../../sdk/protocol.js';
import * as validators from '../../schemas/generated/validators.js';
import { modernSession } from '../fixtures/claude/sessions.js';
import { sessionsDir } from '../fixtures/codex/rollout-builder.js';
import { compactedSession, paginatedSession } from '../fixtures/codex/sessions.js';
import { checkedCall as call } from '../helpers/checked-call.js';
import { connectInMemory } from '../helpers/memory-connection.js';
import { makeTempHome, type TempHome } from '../helpers/temp-home.js';


let home: TempHome;
let conn: ReturnType<typeof connectInMemory>;
beforeEach(() => {
  home = makeTempHome('codex-proto-');
  conn = connectInMemory(codexPlugin);
});
afterEach(() => {
  conn.dispose();
  home.cleanup();
});

describe('provider-codex over the plugin protocol', () => {
  it('introduces itself as the codex provider', async () => {
    const init = await conn.host.sendRequest(P.Initialize, { protocol_versions: [1], host: { name: 'test', version: '0' } });
    expect(validators.validateInitializeResult(init)).toBe(true);
    expect(init.plugin.id).toBe('provider-codex');
    expect(init.providers).toEqual([{ id: 'codex', display_name: 'Codex', native_control: 'thread/compact/start', supports_cache_edit: false }]);
  });

  it('discovers, identifies, measures, parses and verifies a rollout', async () => {
    const { builder } = compactedSession({ paginated: true });
    const path = builder.writeTo(sessionsDir(home.codexHome));
    const found = await call<{ sessions: Array<{ session: { path: string; session_id: string } }> }>(conn, P.Methods.providerDiscover, { provider_id: 'codex', home: home.codexHome });
    expect(found.sessions.map((s) => s.session.session_id)).toEqual([builder.id]);
    const id = await call<{ matches: boolean }>(conn, P.Methods.providerIdentify, { provider_id: 'codex', path });
    expect(id.matches).toBe(true);
    const usage = await call<{ usage: { context_tokens: number } }>(conn, P.Methods.providerUsage, { provider_id: 'codex', path });
    expect(usage.usage.context_tokens).toBe(20300);
    const sha = createHash('sha256').update(readFileSync(path)).digest('hex');
    const t = await call<{ items: unknown[]; source_sha256: string }>(conn, P.Methods.providerParse, { provider_id: 'codex', path, expected_sha256: sha });
    expect(t.items).toHaveLength(builder.lineCount);
    expect(t.source_sha256).toBe(sha);
    const v = await call<{ findings: unknown[] }>(conn, P.Methods.providerVerify, { provider_id: 'codex', path });
    expect(v.findings).toEqual([]);
  });

  it('answers verify of a Claude transcript with the error finding not_codex_rollout, as the Claude provider answers a rollout', async () => {
    const path = join(home.root, 'claude.jsonl');
    writeFileSync(path, modernSession().toJsonl());
    const v = await call<{ findings: Array<{ code: string; severity: string }>; record_count: number }>(conn, P.Methods.providerVerify, { provider_id: 'codex', path });
    expect(v.findings.map((f) => [f.severity, f.code])).toEqual([['error', 'not_codex_rollout']]);
    expect(v.record_count).toBe(modernSession().lines().length);
  });

  it('renders into the staging path and names the fork target', async () => {
    const { builder, lines } = paginatedSession();
    const path = builder.writeTo(sessionsDir(home.codexHome));
    const staging = join(home.root, 'staging.jsonl');
    writeFileSync(staging, '');
    const newId = '019e7777-8888-7999-8aaa-bbbbccccdddd';
    const rendered = await call<{ elided_records: number; appended_records: number }>(conn, P.Methods.providerRender, {
      provider_id: 'codex',
      path,
      source_sha256: createHash('sha256').update(readFileSync(path)).digest('hex'),
      edits: [
        { op: 'elide', line_indexes: [lines.shellOutput], stub_template: '[elided {bytes} bytes]' },
        { op: 'inject_digest', digest: { goal: 'ship it', covers_items: 3 } },
      ],
      staging_path: staging,
      new_session_id: newId,
      now: '2026-03-01T00:00:00.000Z',
    });
    expect(rendered).toMatchObject({ elided_records: 1, appended_records: 1 });
    const target = await call<{ target_path: string; resume_command: string[] }>(conn, P.Methods.providerForkTarget, {
      provider_id: 'codex',
      path,
      session_id: builder.id,
      new_session_id: newId,
      now: '2026-03-01T00:00:00.000Z',
    });
    expect(target.resume_command).toEqual(['codex', 'resume', newId]);
    expect(target.target_path.endsWith(`-${newId}.jsonl`)).toBe(true);
  });

  it('answers bad input with protocol error codes, not crashes', async () => {
    const empty = join(home.root, 'empty.jsonl');
    writeFileSync(empty, '');
    await expect(conn.host.sendRequest(P.Methods.providerParse, { provider_id: 'codex', path: empty })).rejects.toMatchObject({ code: P.PluginErrorCodes.InvalidInput });
    const { builder } = paginatedSession();
    const path = builder.writeTo(sessionsDir(home.codexHome));
    await expect(conn.host.sendRequest(P.Methods.providerParse, { provider_id: 'codex', path, expected_sha256: 'f'.repeat(64) })).rejects.toMatchObject({ code: P.PluginErrorCodes.SourceChanged });
    await expect(conn.host.sendRequest(P.Methods.providerParse, { provider_id: 'codex', path, max_records: 3 })).rejects.toMatchObject({ code: P.PluginErrorCodes.LimitExceeded });
    await expect(conn.host.sendRequest(P.Methods.providerParse, { provider_id: 'claude_code', path })).rejects.toMatchObject({ code: P.PluginErrorCodes.NotSupported });
  });
});
