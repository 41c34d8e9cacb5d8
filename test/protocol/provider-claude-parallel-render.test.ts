/**
 * The Claude Code provider rendering a candidate on several threads writes exactly what one pass
 * writes: the same bytes, the same result, and the same error, message included, when the render is
 * refused. The parallel side is the provider bundled with esbuild (workers start from the bundle
 * file, as they do from main.cjs) with parallelism forced on small files; the single pass is the
 * provider's sources, which never start threads. Range boundaries are swept across every line.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTranscript } from '../../plugins/provider-claude-code/src/parse.js';
import { renderCandidate } from '../../plugins/provider-claude-code/src/render.js';
import type { DigestBlock, Edit, ProviderRenderParams, ProviderRenderResult } from '../../schemas/generated/types.js';
import { writeBigSession } from '../fixtures/claude/big-session.js';
import { breakages, tornFinalLine } from '../fixtures/claude/breakages.js';
import { branchedSession, modernSession } from '../fixtures/claude/sessions.js';
import { spreadSessionLines } from '../fixtures/claude/spread-session.js';
import { loadBundledProvider, sessionFile, stagingFile, sweep, type ParallelConfig, type PoolControls } from './claude-parallel-support.js';
import { elidableLines } from '../helpers/elide-targets.js';

interface ParallelBundle extends PoolControls {
  renderCandidate: (params: ProviderRenderParams) => Promise<ProviderRenderResult>;
}

let dir: string;
let bundleFile: string;
let par: ParallelBundle;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'claude-parallel-render-'));
  ({ file: bundleFile, bundle: par } = await loadBundledProvider<ParallelBundle>(dir, 'claude-parallel-render.cjs', [
    "export { enableParallelScan, parallelScanCounts } from './plugins/provider-claude-code/src/scan-pool.ts';",
    "export { renderCandidate } from './plugins/provider-claude-code/src/render.ts';",
  ]));
}, 60_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

const file = (text: string | Buffer) => sessionFile(dir, text);

const digest: DigestBlock = { goal: 'Fix the parser', covers_items: 3, files_touched: ['src/parse.ts'], concepts: [], decisions: ['keep the reader'], errors: [], open_tasks: [] };
const NEW_ID = '7d1f6c2a-0b3e-4f5a-9c8d-2e4f6a8b0c1d';
const STUB = '[output elided by gobstopper: {bytes} bytes]';

interface Ask {
  edits: Edit[];
  newSessionId?: string | null;
  sha?: string;
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
const sourceUuids = new Map<string, Set<string>>();
const uuidsOf = (source: string) => sourceUuids.get(source) ?? sourceUuids.set(source, new Set(readFileSync(source, 'utf8').match(UUID))).get(source)!;

/**
 * What a render of `source` gives: the result and the staging file's bytes, or the error. A state
 * card's own uuids are random, so uuids the source does not hold are replaced before comparing.
 */
type Rendered = { result: ProviderRenderResult; text: string } | { error: { code: unknown; message: string } };

async function renderWith(fn: ParallelBundle['renderCandidate'], source: string, sha: string, ask: Ask): Promise<Rendered> {
  const staging = stagingFile(dir);
  try {
    const result = await fn({ provider_id: 'claude_code', path: source, source_sha256: ask.sha ?? sha, edits: ask.edits, staging_path: staging, new_session_id: ask.newSessionId ?? null, now: '2026-03-01T10:00:00.000Z' });
    const known = uuidsOf(source);
    const written = readFileSync(staging, 'utf8');
    const text = written.replace(UUID, (uuid) => (known.has(uuid) || uuid === NEW_ID ? uuid : 'fresh-uuid'));
    const fresh = text !== written;
    return { result: fresh ? { ...result, output_sha256: 'differs by fresh uuids' } : result, text };
  } catch (e) {
    const error = e as { code?: unknown; message: string };
    return { error: { code: error.code ?? null, message: error.message } };
  }
}

/** Every parallel render of `source` under `configs` equals the single pass; returns it and the counts. */
async function expectSameRenders(source: string, asks: Ask[], configs: ParallelConfig[]) {
  const sha = (await parseTranscript({ provider_id: 'claude_code', path: source }).catch(() => ({ source_sha256: 'f'.repeat(64) }))).source_sha256;
  const before = par.parallelScanCounts();
  const expected: Rendered[] = [];
  for (const ask of asks) {
    const one = await renderWith(renderCandidate, source, sha, ask);
    expected.push(one);
    for (const config of configs) {
      par.enableParallelScan(bundleFile, { minBytes: 0, coldMinBytes: 0, ...config });
      expect(await renderWith(par.renderCandidate, source, sha, ask), JSON.stringify({ config, edits: ask.edits.map((e) => e.op) })).toStrictEqual(one);
    }
  }
  const after = par.parallelScanCounts();
  return { expected, parallel: after.parallel - before.parallel, fallbacks: after.fallbacks - before.fallbacks };
}

/** Elide targets: the source's elidable tool results, as parse reports them. */
async function elidable(source: string): Promise<number[]> {
  const t = await parseTranscript({ provider_id: 'claude_code', path: source });
  return elidableLines(t.items);
}

const asksFor = (lines: number[]): Ask[] => [
  { edits: [] },
  { edits: [{ op: 'elide', line_indexes: lines, stub_template: STUB }] },
  { edits: [{ op: 'elide', line_indexes: lines, stub_template: STUB }, { op: 'inject_digest', digest }], newSessionId: NEW_ID },
  { edits: [{ op: 'inject_digest', digest }] },
];

describe('a render on several threads writes what one pass writes', () => {
  it('sessions whose calls, results and uuids are spread across ranges, with every kind of edit', async () => {
    const jsonl = (lines: readonly string[]) => lines.join('\n') + '\n';
    for (const text of [modernSession().toJsonl(), branchedSession().b.toJsonl(), jsonl(spreadSessionLines())]) {
      const source = file(text);
      const { expected, parallel, fallbacks } = await expectSameRenders(source, asksFor(await elidable(source)), sweep(text, 2));
      expect(parallel).toBeGreaterThan(0);
      expect(expected.some((e) => 'result' in e && (e.result.elided_records ?? 0) > 0 && e.result.appended_records === 2)).toBe(true);
      // Some of these sessions are refused for a card (no live leaf) the same way on both sides;
      // a clean render never falls back.
      if (expected.every((e) => 'result' in e)) expect(fallbacks).toBe(0);
    }
  });

  it('an unterminated final line stays unterminated, or gets its newline before a card', async () => {
    const text = modernSession().toJsonl().replace(/\n$/, '');
    const source = file(text);
    const { expected, fallbacks } = await expectSameRenders(source, asksFor(await elidable(source)), sweep(text, 2));
    expect(fallbacks).toBe(0);
    expect((expected[0] as { text: string }).text).toBe(text);
    expect((expected[3] as { text: string }).text.startsWith(text + '\n')).toBe(true);
  });

  it('a large session, with lines crossing the 1 MiB read chunks inside every range', async () => {
    const source = join(dir, 'big.jsonl');
    writeBigSession(source, { targetBytes: 6 * 1024 * 1024, records: 4000 });
    const lines = await elidable(source);
    const configs = [
      { threads: 2, mainShare: 0.5, batchRows: 4096 },
      { threads: 4, mainShare: 0.1, batchRows: 333 },
      { threads: 3, mainShare: 0.37, batchRows: 1000 },
    ];
    const { expected, parallel, fallbacks } = await expectSameRenders(source, asksFor(lines.slice(0, -8)), configs);
    expect(fallbacks).toBe(0);
    expect(parallel).toBe(configs.length * 4);
    expect((expected[1] as { result: ProviderRenderResult }).result.elided_records).toBe(lines.length - 8);
  });

  it('refusals read the same: broken lines, a torn final line, a changed source', async () => {
    for (const b of breakages()) {
      const source = file(b.text);
      const lines = await elidable(source).catch(() => [1, 2]);
      await expectSameRenders(source, [asksFor(lines)[2]!, { edits: [{ op: 'elide', line_indexes: [0], stub_template: STUB }] }], sweep(b.text, 5).filter((_, i) => i % 4 === 0));
    }
    const torn = file(tornFinalLine());
    const { expected } = await expectSameRenders(torn, [{ edits: [{ op: 'inject_digest', digest }] }], sweep(tornFinalLine(), 2));
    expect((expected[0] as { error: { message: string } }).error.message).toMatch(/torn record/);
    const source = file(modernSession().toJsonl());
    const changed = await expectSameRenders(source, [{ edits: [], sha: '0'.repeat(64) }], sweep(modernSession().toJsonl(), 4));
    expect((changed.expected[0] as { error: { message: string } }).error.message).toMatch(/changed since it was hashed/);
  });
});
