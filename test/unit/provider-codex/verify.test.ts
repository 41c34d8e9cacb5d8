import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from '../../../plugins/provider-codex/src/parse.js';
import { verify } from '../../../plugins/provider-codex/src/verify.js';
import { validateProviderVerifyResult } from '../../../schemas/generated/validators.js';
import { breakages } from '../../fixtures/codex/breakages.js';
import { RolloutBuilder, item } from '../../fixtures/codex/rollout-builder.js';
import { compactedSession, legacySession, paginatedSession } from '../../fixtures/codex/sessions.js';

const dir = mkdtempSync(join(tmpdir(), 'codex-verify-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const run = (path: string) => verify({ provider_id: 'codex', path });

describe('provider-codex verify: sound rollouts', () => {
  for (const [name, make] of [
    ['legacy', () => legacySession().builder],
    ['paginated', () => paginatedSession().builder],
    ['compacted legacy', () => compactedSession().builder],
    ['compacted paginated', () => compactedSession({ paginated: true }).builder],
  ] as const) {
    it(`finds nothing in a ${name} session`, async () => {
      const result = await run(make().writeTo(join(dir, String(n++))));
      expect(validateProviderVerifyResult(result)).toBe(true);
      expect(result.findings).toEqual([]);
      expect(result.session_kind).toBe('session');
    });
  }

  it('a byte-order mark makes the first line unreadable, as it is to the client\'s JSON parser', async () => {
    const path = legacySession().builder.writeTo(join(dir, String(n++)));
    writeFileSync(path, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), readFileSync(path)]));
    const result = await run(path);
    expect(result.findings).toContainEqual(expect.objectContaining({ severity: 'error', code: 'invalid_json', line_index: 0 }));
  });

  it('accepts a legacy rollout with neither ordinals nor history_mode (the client keeps appended cards there)', async () => {
    const b = legacySession().builder;
    b.response(item.user('[gobstopper state card]\n(covers 3 earlier records)'));
    expect((await run(b.writeTo(join(dir, String(n++))))).findings).toEqual([]);
  });
});

describe('provider-codex verify: every breakage the client repairs or refuses', () => {
  for (const c of breakages()) {
    it(`${c.name}: ${c.client}`, async () => {
      const path = c.builder.writeTo(join(dir, String(n++)), { fileId: c.fileId, text: c.text });
      const result = await run(path);
      expect(validateProviderVerifyResult(result), JSON.stringify(validateProviderVerifyResult.errors)).toBe(true);
      const hit = result.findings.find((f) => f.code === c.expect.code && f.line_index === c.expect.line);
      expect(hit, JSON.stringify(result.findings)).toBeDefined();
      expect(hit!.severity).toBe(c.expect.severity);
      if (c.expect.severity === 'error') expect(result.findings.some((f) => f.severity === 'error')).toBe(true);
      for (const f of result.findings) expect(f.message).not.toMatch(/Run the tests|orphan output|appended/);
      // A message speaks of lines as people count them, as the line it is shown next to does.
      const own = hit!.message.match(/\bline (\d+)\b|final line \((\d+)\)|\(line (\d+)\)/);
      if (own) expect(Number(own[1] ?? own[2] ?? own[3]), hit!.message).toBe(hit!.line_index! + 1);
      if (c.inert) {
        const t = await parse({ provider_id: 'codex', path });
        expect(t.items.every((i) => i.est_tokens === 0)).toBe(true);
        expect(t.usage.context_state).toBe('unknown');
      }
    });
  }

  it('calls a file with an unknown history_mode a composite', async () => {
    const c = breakages().find((x) => x.expect.code === 'invalid_history_mode')!;
    expect((await run(c.builder.writeTo(join(dir, String(n++))))).session_kind).toBe('composite');
  });

  it('flags sub-agent threads and native forks that read their parent', async () => {
    const b = new RolloutBuilder({ paginated: true });
    b.sessionMeta({ source: { subagent: { thread_spawn: { parent_thread_id: 'p', depth: 1 } } }, history_base: { thread_id: 'p', end_ordinal_exclusive: 9, end_byte_offset: 1234 } }).user('hi');
    const result = await run(b.writeTo(join(dir, String(n++))));
    expect(result.session_kind).toBe('subagent');
    expect(result.findings.map((f) => f.code).sort()).toEqual(['depends_on_parent_rollout', 'subagent_thread']);
  });

  it('caps the finding list on a file made of broken lines', async () => {
    const b = new RolloutBuilder();
    b.sessionMeta();
    for (let i = 0; i < 1500; i += 1) b.raw('[0]');
    const result = await run(b.writeTo(join(dir, String(n++))));
    expect(result.findings.length).toBe(1001);
    expect(result.findings.at(-1)).toMatchObject({ code: 'findings_truncated', severity: 'info' });
    expect(result.record_count).toBe(1501);
  });
});

describe('provider-codex parse reports what verify reports', () => {
  it('marks its findings complete, and they equal verify\'s on sound and broken rollouts alike', async () => {
    const builders = [legacySession().builder, paginatedSession().builder, compactedSession({ paginated: true }).builder, ...breakages().map((c) => c)];
    let withFindings = 0;
    for (const entry of builders) {
      const path = 'builder' in entry ? entry.builder.writeTo(join(dir, String(n++)), { fileId: entry.fileId, text: entry.text }) : entry.writeTo(join(dir, String(n++)));
      const t = await parse({ provider_id: 'codex', path }).catch(() => null);
      if (t === null) continue;
      expect(t.findings_complete).toBe(true);
      expect(t.findings).toEqual((await run(path)).findings);
      if ((t.findings ?? []).length > 0) withFindings += 1;
    }
    expect(withFindings).toBeGreaterThan(5);
  });
});
