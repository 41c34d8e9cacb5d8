/**
 * Every provider method answers every input cleanly, over the real protocol framing: a result that
 * matches the method's schema, or a protocol error with one of the plugin error codes. An internal
 * error (-32603, a crash inside a handler) is a bug whatever the input. Inputs: every file of
 * ../shared/fixtures (when present), each provider's breakage fixtures, and a catalogue of bad files.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claudeCodePlugin } from '../../plugins/provider-claude-code/src/plugin.js';
import { codexPlugin } from '../../plugins/provider-codex/src/plugin.js';
import type { PluginDefinition } from '../../sdk/serve.js';
import * as P from '../../sdk/protocol.js';
import type { ProviderIdentifyResult, Transcript } from '../../schemas/generated/types.js';
import * as validators from '../../schemas/generated/validators.js';
import { breakages as claudeBreakages, tornFinalLine } from '../fixtures/claude/breakages.js';
import { modernSession } from '../fixtures/claude/sessions.js';
import { breakages as codexBreakages } from '../fixtures/codex/breakages.js';
import { legacySession } from '../fixtures/codex/sessions.js';
import { connectInMemory } from '../helpers/memory-connection.js';
import { elidableLines } from '../helpers/elide-targets.js';

type Validator = ((data: unknown) => boolean) & { errors?: unknown };
const validator = (name: string) => (validators as unknown as Record<string, Validator>)[`validate${name}`]!;
const PLUGIN_CODES = new Set<number>(Object.values(P.PluginErrorCodes));

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const fixtures = join(repoRoot, '..', 'shared', 'fixtures');
const JAZZY_CLAUDE = join(fixtures, 'real', 'claude', 'jazzyalex__agent-sessions__schema-coverage__claude-small.jsonl');
if (!existsSync(JAZZY_CLAUDE)) console.log(`composite Claude file sweep skipped: ${JAZZY_CLAUDE} is absent`);

const work = mkdtempSync(join(tmpdir(), 'provider-sweep-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function fixtureFiles(): string[] {
  if (!existsSync(fixtures)) return [];
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(dir, e.name));
      else out.push(join(dir, e.name));
    }
  };
  walk(fixtures);
  return out.sort();
}

/** Files that are wrong in every way the readers must survive. */
function badInputs(): string[] {
  const dir = join(work, 'bad');
  mkdirSync(dir);
  const files: Array<[string, string | Buffer]> = [
    ['empty.jsonl', ''],
    ['binary.jsonl', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x0a])],
    ['utf8.jsonl', Buffer.concat([Buffer.from('{"type":"user","x":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}\n')])],
    ['array.jsonl', '["an","array"]\n42\nnull\n"text"\n'],
    ['deep.jsonl', `${'['.repeat(200_000)}${']'.repeat(200_000)}\n`],
    ['deep-object.jsonl', `{"type":"user","message":{"role":"user","content":${'['.repeat(100_000)}${']'.repeat(100_000)}}}\n`],
    ['long-line.jsonl', `{"type":"user","message":{"role":"user","content":"${'z'.repeat(3 * 1024 * 1024)}"}}\n`],
    ['torn.jsonl', tornFinalLine()],
    ['wrong-types.jsonl', '{"type":"user","uuid":7,"message":"hi"}\n{"type":"assistant","message":{"content":5}}\n{"type":"session_meta","payload":"x"}\n{"type":"response_item","payload":{"type":7}}\n'],
    ['self-parent.jsonl', '{"type":"user","uuid":"a","parentUuid":"a","sessionId":"s","message":{"role":"user","content":"hi"}}\n'],
    ['nulls.jsonl', '{"type":"user","uuid":null,"parentUuid":null,"sessionId":"s","message":{"role":null,"content":[null,1,"x",{"type":null}]}}\n'],
    ['codex-odd.jsonl', '{"timestamp":null,"ordinal":"x","type":"compacted","payload":{"replacement_history":[1,null]}}\n{"type":"response_item","payload":{"type":"function_call_output","call_id":{},"output":[null]}}\n'],
    ['no-newline-json.jsonl', '{"type":"last-prompt","leafUuid":5}'],
    ['claude-valid.jsonl', modernSession().toJsonl()],
    ['codex-valid.jsonl', legacySession().builder.text()],
  ];
  const paths = files.map(([name, content]) => {
    const path = join(dir, name);
    writeFileSync(path, content);
    return path;
  });
  const sub = join(dir, 'a-directory.jsonl');
  mkdirSync(sub);
  const link = join(dir, 'link.jsonl');
  symlinkSync(paths.at(-1)!, link);
  paths.push(sub, link, join(dir, 'missing.jsonl'));
  claudeBreakages().forEach((b, i) => {
    const path = join(dir, `claude-breakage-${i}.jsonl`);
    writeFileSync(path, b.text);
    paths.push(path);
  });
  codexBreakages().forEach((b, i) => {
    const path = join(dir, `codex-breakage-${i}.jsonl`);
    writeFileSync(path, b.text ?? b.builder.text());
    paths.push(path);
  });
  return paths;
}

const providers: Array<[string, string, PluginDefinition]> = [
  ['claude_code', 'provider-claude-code', claudeCodePlugin],
  ['codex', 'provider-codex', codexPlugin],
];

let inputs: string[] = [];
beforeAll(() => {
  inputs = [...fixtureFiles(), ...badInputs()];
});

describe.each(providers)('%s answers every input without an internal error', (providerId, _bundle, def) => {
  it('identify, usage, parse and verify', { timeout: 120_000 }, async () => {
    const conn = connectInMemory(def);
    const internal: string[] = [];
    let answered = 0;
    try {
      for (const path of inputs) {
        for (const method of [P.Methods.providerIdentify, P.Methods.providerUsage, P.Methods.providerParse, P.Methods.providerVerify]) {
          const schemas = P.MethodSchemas[method]!;
          try {
            const result = await conn.host.sendRequest(method, { provider_id: providerId, path });
            const check = validator(schemas.result!);
            if (!check(result)) internal.push(`${method} ${path}: result fails its schema ${JSON.stringify(check.errors)}`);
            answered += 1;
          } catch (error) {
            const code = (error as { code?: unknown }).code;
            const message = String((error as { message?: unknown }).message);
            if (typeof code !== 'number' || !PLUGIN_CODES.has(code)) internal.push(`${method} ${path}: ${String(code)} ${message}`);
            else if (message.includes('\n')) internal.push(`${method} ${path}: a multi-line message`);
          }
        }
      }
    } finally {
      conn.dispose();
    }
    expect(internal).toEqual([]);
    expect(answered).toBeGreaterThan(inputs.length);
  });
});

describe.each(providers)('%s renders every input it can parse, or refuses it cleanly', (providerId, _bundle, def) => {
  it('render with an elision of every elidable item and a state card, then verify', { timeout: 120_000 }, async () => {
    const conn = connectInMemory(def);
    const internal: string[] = [];
    let rendered = 0;
    try {
      for (const [n, path] of inputs.entries()) {
        let transcript: Transcript;
        try {
          transcript = await conn.host.sendRequest<Transcript>(P.Methods.providerParse, { provider_id: providerId, path });
        } catch {
          continue;
        }
        const staging = join(work, `render-${providerId}-${n}.jsonl`);
        writeFileSync(staging, '', { mode: 0o600 });
        const elide = elidableLines(transcript.items);
        const edits = [
          ...(elide.length > 0 ? [{ op: 'elide', line_indexes: elide.slice(0, 64), stub_template: '[elided {bytes} bytes]' }] : []),
          { op: 'inject_digest', digest: { goal: 'keep going', covers_items: elide.length } },
        ];
        try {
          const result = await conn.host.sendRequest(P.Methods.providerRender, {
            provider_id: providerId,
            path,
            source_sha256: transcript.source_sha256,
            edits,
            staging_path: staging,
            new_session_id: '7d1f6c2a-0b3e-4f5a-9c8d-2e4f6a8b0c1d',
            now: '2026-03-01T10:00:00.000Z',
          });
          const check = validator(P.MethodSchemas[P.Methods.providerRender]!.result!);
          if (!check(result)) internal.push(`render ${path}: result fails its schema`);
          await conn.host.sendRequest(P.Methods.providerVerify, { provider_id: providerId, path: staging });
          rendered += 1;
        } catch (error) {
          const code = (error as { code?: unknown }).code;
          if (typeof code !== 'number' || !PLUGIN_CODES.has(code)) internal.push(`render ${path}: ${String(code)} ${String((error as Error).message)}`);
        }
      }
    } finally {
      conn.dispose();
    }
    expect(internal).toEqual([]);
    expect(rendered).toBeGreaterThan(0);
  });

  it('refuses a staging path that is not an empty regular file with a protocol error', async () => {
    const conn = connectInMemory(def);
    const source = join(work, 'bad', providerId === 'claude_code' ? 'claude-valid.jsonl' : 'codex-valid.jsonl');
    try {
      const transcript = await conn.host.sendRequest<Transcript>(P.Methods.providerParse, { provider_id: providerId, path: source });
      const used = join(work, `used-staging-${providerId}.jsonl`);
      writeFileSync(used, 'already here\n');
      for (const staging of [used, join(work, `missing-staging-${providerId}.jsonl`), work]) {
        const error = await conn.host
          .sendRequest(P.Methods.providerRender, { provider_id: providerId, path: source, source_sha256: transcript.source_sha256, edits: [], staging_path: staging, new_session_id: null, now: '2026-03-01T10:00:00.000Z' })
          .then(() => null, (e: unknown) => e as { code: number });
        expect(error?.code, staging).toBe(P.PluginErrorCodes.InvalidInput);
      }
      expect(readFileSync(join(work, `used-staging-${providerId}.jsonl`), 'utf8')).toBe('already here\n');
    } finally {
      conn.dispose();
    }
  });
});

describe('discover over homes holding every input', () => {
  it('lists what it can and skips the rest, for both providers', { timeout: 120_000 }, async () => {
    const home = join(work, 'home');
    const project = join(home, '.claude', 'projects', '-home-user-project');
    const rollouts = join(home, '.codex', 'sessions', '2026', '02', '23');
    mkdirSync(project, { recursive: true });
    mkdirSync(join(project, 'f0e1d2c3-0000-4000-8000-000000000001', 'subagents'), { recursive: true });
    mkdirSync(rollouts, { recursive: true });
    let k = 0;
    for (const path of inputs) {
      if (!existsSync(path) || !statSync(path).isFile()) continue;
      k += 1;
      const id = `019c8a4c-ed82-79a1-aa28-${String(k).padStart(12, '0')}`;
      copyFileSync(path, join(project, `f0e1d2c3-0000-4000-8000-${String(k).padStart(12, '0')}.jsonl`));
      copyFileSync(path, join(project, 'f0e1d2c3-0000-4000-8000-000000000001', 'subagents', `agent-a${k}.jsonl`));
      copyFileSync(path, join(rollouts, `rollout-2026-02-23T12-40-23-${id}.jsonl`));
    }
    for (const [providerId, , def] of providers) {
      const conn = connectInMemory(def);
      try {
        const homeDir = providerId === 'claude_code' ? join(home, '.claude') : join(home, '.codex');
        const result = await conn.host.sendRequest(P.Methods.providerDiscover, { provider_id: providerId, home: homeDir, include_subagents: true });
        const check = validator(P.MethodSchemas[P.Methods.providerDiscover]!.result!);
        expect(check(result), JSON.stringify(check.errors)).toBe(true);
        expect((result as { sessions: unknown[] }).sessions.length).toBeGreaterThan(0);
      } finally {
        conn.dispose();
      }
    }
  });
});

describe.skipIf(!existsSync(JAZZY_CLAUDE))('the composite Claude file of record shapes', () => {
  it('is identified as a composite by the Claude provider and as no rollout by the Codex provider', async () => {
    const claude = connectInMemory(claudeCodePlugin);
    const codex = connectInMemory(codexPlugin);
    try {
      const c = await claude.host.sendRequest<ProviderIdentifyResult>(P.Methods.providerIdentify, { provider_id: 'claude_code', path: JAZZY_CLAUDE });
      expect(c).toMatchObject({ matches: true, session: { provider: 'claude_code', kind: 'composite', path: JAZZY_CLAUDE } });
      const x = await codex.host.sendRequest<ProviderIdentifyResult>(P.Methods.providerIdentify, { provider_id: 'codex', path: JAZZY_CLAUDE });
      expect(x).toEqual({ matches: false, session: null });
    } finally {
      claude.dispose();
      codex.dispose();
    }
  });
});
