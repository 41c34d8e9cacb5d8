/**
 * A verify that starts from a render (verify-rendered.ts) copies the rows of the source the render
 * copied. When that source was parsed on several threads, its rows were joined from ranges
 * (range-join.ts): the candidate's findings must still be what a single-pass verify of the file
 * finds. The parallel side is the provider bundled with esbuild, with parallelism forced on small
 * files and range boundaries swept across every line; the single pass is the provider's sources.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyTranscript } from '../../plugins/provider-claude-code/src/verify.js';
import type { DigestBlock, Edit, ProviderParseParams, ProviderRenderParams, ProviderRenderResult, ProviderVerifyParams, ProviderVerifyResult, Transcript } from '../../schemas/generated/types.js';
import { breakages } from '../fixtures/claude/breakages.js';
import { branchedSession, modernSession } from '../fixtures/claude/sessions.js';
import { spreadSessionLines } from '../fixtures/claude/spread-session.js';
import { loadBundledProvider, sessionFile, stagingFile, sweep, type PoolControls } from './claude-parallel-support.js';
import { elidableLines } from '../helpers/elide-targets.js';

interface ParallelBundle extends PoolControls {
  parseTranscript: (params: ProviderParseParams) => Promise<Transcript>;
  renderCandidate: (params: ProviderRenderParams) => Promise<ProviderRenderResult>;
  verifyTranscript: (params: ProviderVerifyParams) => Promise<ProviderVerifyResult>;
  renderedVerifyCounts: () => { reused: number; declined: number };
}

let dir: string;
let bundleFile: string;
let par: ParallelBundle;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'claude-parallel-verify-rendered-'));
  ({ file: bundleFile, bundle: par } = await loadBundledProvider<ParallelBundle>(dir, 'claude-parallel-verify-rendered.cjs', [
    "export { enableParallelScan, parallelScanCounts } from './plugins/provider-claude-code/src/scan-pool.ts';",
    "export { parseTranscript } from './plugins/provider-claude-code/src/parse.ts';",
    "export { renderCandidate } from './plugins/provider-claude-code/src/render.ts';",
    "export { verifyTranscript } from './plugins/provider-claude-code/src/verify.ts';",
    "export { renderedVerifyCounts } from './plugins/provider-claude-code/src/rendered-files.ts';",
  ]));
}, 60_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

const file = (text: string | Buffer) => sessionFile(dir, text);

const digest: DigestBlock = { goal: 'Fix the parser', covers_items: 3, files_touched: ['src/parse.ts'], concepts: [], decisions: ['keep the reader'], errors: [], open_tasks: [] };
const STUB = '[output elided by gobstopper: {bytes} bytes]';
const jsonl = (lines: readonly string[]) => lines.join('\n') + '\n';

/**
 * For each range split: parses `source` on threads, renders its elidable results elided with a
 * card, and expects the verify that starts from that render to equal a single-pass verify.
 * Returns how many verifies started from the render and how many parses ran on threads.
 */
async function expectSameVerifies(source: string, text: string, newSessionId: string | null): Promise<{ fromRender: number; parallel: number }> {
  let fromRender = 0;
  const scansBefore = par.parallelScanCounts().parallel;
  for (const config of sweep(text, 2)) {
    par.enableParallelScan(bundleFile, { minBytes: 0, coldMinBytes: 0, ...config });
    let parsed: Transcript;
    try {
      parsed = await par.parseTranscript({ provider_id: 'claude_code', path: source });
    } catch {
      return { fromRender, parallel: 0 }; // Refused by the parse: nothing is rendered from it.
    }
    const lines = elidableLines(parsed.items);
    const edits: Edit[] = [{ op: 'elide', line_indexes: lines, stub_template: STUB }, { op: 'inject_digest', digest }];
    const staging = stagingFile(dir);
    const renderWith = (asked: Edit[]) =>
      par.renderCandidate({ provider_id: 'claude_code', path: source, source_sha256: parsed.source_sha256, edits: asked, staging_path: staging, new_session_id: newSessionId, now: '2026-03-01T10:00:00.000Z' }).then(
        () => true,
        () => false,
      );
    // A card needs a live leaf, and a sub-agent transcript is refused whatever is asked.
    if (!(await renderWith(edits)) && !(await renderWith(edits.slice(0, 1)))) continue;
    const before = par.renderedVerifyCounts().reused;
    const fromRenderResult = await par.verifyTranscript({ provider_id: 'claude_code', path: staging });
    fromRender += par.renderedVerifyCounts().reused - before;
    expect(fromRenderResult, JSON.stringify(config)).toStrictEqual(await verifyTranscript({ provider_id: 'claude_code', path: staging }));
  }
  return { fromRender, parallel: par.parallelScanCounts().parallel - scansBefore };
}

describe('a verify that starts from the render of a source parsed on threads', () => {
  it.each([
    ['a candidate', null],
    ['a fork', '7e57f0ce-0000-4000-8000-00000000f0c5'],
  ])('finds what a single-pass verify finds, wherever the ranges were split: %s', async (_, newSessionId) => {
    const texts = [modernSession().toJsonl(), branchedSession().b.toJsonl(), jsonl(spreadSessionLines()), ...breakages().map((b) => b.text)];
    let fromRender = 0;
    let parallel = 0;
    for (const text of texts) {
      const counts = await expectSameVerifies(file(text), text, newSessionId);
      fromRender += counts.fromRender;
      parallel += counts.parallel;
    }
    expect(parallel).toBeGreaterThan(0);
    expect(fromRender).toBeGreaterThan(0);
  });
});
