/**
 * Every built-in strategy on the real transcripts: parse each main fixture with its provider, run
 * the strategy with a trigger low enough to fire, admit the plan with the kernel's rules, and render
 * file plans into a candidate the provider's own verifier accepts without new errors.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { admitProposal } from '../../kernel/policy/admit-proposal.js';
import { contextTokens } from '../../kernel/policy/context.js';
import { admitEdits } from '../../kernel/validate/edit-rules.js';
import { claudeCodePlugin } from '../../plugins/provider-claude-code/src/plugin.js';
import { codexPlugin } from '../../plugins/provider-codex/src/plugin.js';
import { PluginErrorCodes } from '../../sdk/protocol.js';
import { staleCandidates } from '../../sdk/strategy/candidates.js';
import { elisionSavings } from '../../sdk/tokens.js';
import type { Transcript } from '../../schemas/generated/types.js';
import { proposeParams } from '../fixtures/transcripts/params.js';
import { runStrategy, STRATEGIES } from '../unit/strategies/in-process-host.js';
import { errorCodes, mainFixtures, noHost as ctx, PROVIDERS, REAL } from './provider-fixtures.js';

const NOW = '2026-03-01T10:00:00.000Z';
/** Lower than the default 4,096 so small fixtures still produce plans, high enough that a plan is real work. */
const MIN_SAVINGS = 1024;
const KEEP = 1;

const fixtures = mainFixtures();
const work = mkdtempSync(join(tmpdir(), 'gob-real-strategies-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
let n = 0;
/** Strategy id -> fixtures whose plan was admitted, rendered and verified. */
const renderedBy = new Map<string, number>();

describe.skipIf(fixtures.length === 0)('strategies on real transcripts', () => {
  if (fixtures.length === 0) console.warn(`skipping: no real fixtures at ${REAL}`);

  for (const { dir, file } of fixtures) {
    it(`${dir}/${file}: every strategy's plan validates and renders into a copy that verifies`, async () => {
      const provider = PROVIDERS[dir]!;
      const path = join(REAL, dir, file);
      let transcript: Transcript;
      try {
        transcript = (await provider.def.parse!({ provider_id: provider.id, path }, ctx)) as Transcript;
      } catch (error) {
        // A file the provider will not treat as a resumable session is refused with a clear input error.
        expect((error as { code?: number }).code).toBe(PluginErrorCodes.InvalidInput);
        return;
      }
      const before = contextTokens(transcript);
      const sourceSha = createHash('sha256').update(readFileSync(path)).digest('hex');
      const sourceErrors = errorCodes((await provider.def.verify!({ provider_id: provider.id, path }, ctx)).findings);
      const info = { id: provider.id, ...(dir === 'claude' ? claudeCodePlugin : codexPlugin).providers![provider.id]!.info };
      const params = proposeParams(transcript.items, {
        provider: info,
        contextTokens: before,
        policy: { trigger_tokens: 1, floor_tokens: Math.floor(before / 3), keep_recent_tool_outputs: KEEP, min_savings_tokens: MIN_SAVINGS, keep_recent_turns: 2, result_max_bytes: 500 },
      });
      params.session = transcript.session;

      const admitted: string[] = [];
      for (const id of STRATEGIES.keys()) {
        const withEditor = id === 'agentic' ? { ...params, policy: { ...params.policy, strategy_params: { editor: 'compacted' } } } : params;
        const result = await runStrategy(id, withEditor);
        if (result.edits.length === 0) continue;
        expect(() => admitEdits(result.edits, { items: transcript.items, keep_recent_tool_outputs: KEEP, provider: provider.id }), id).not.toThrow();
        if (result.edits.some((e) => e.op === 'provider_compact' || e.op === 'cache_edit')) continue;
        expect(result.context_tokens_after!, id).toBeLessThan(before);
        const gate = admitProposal({
          transcript,
          policy: params.policy,
          context_tokens_before: before,
          proposal: { edits: result.edits, rationale: result.rationale, strategy: id, source: 'strategy' },
        });
        if (gate.status !== 'plan') continue;

        const staging = join(work, `${n++}.jsonl`);
        writeFileSync(staging, '', { mode: 0o600 });
        await provider.def.render!({ provider_id: provider.id, path, source_sha256: sourceSha, edits: result.edits, staging_path: staging, new_session_id: null, now: NOW }, ctx);
        const candidateErrors = errorCodes((await provider.def.verify!({ provider_id: provider.id, path: staging }, ctx)).findings);
        expect([...candidateErrors].filter((code) => !sourceErrors.has(code)), `${id} introduced verify errors`).toEqual([]);
        expect(readFileSync(staging).length, `${id} did not shrink the file`).toBeLessThan(readFileSync(path).length);
        admitted.push(id);
        renderedBy.set(id, (renderedBy.get(id) ?? 0) + 1);
      }
      // Whenever there is enough stale output to pay for a compaction, the plain strategies find it.
      const reclaimable = staleCandidates(transcript.items, KEEP).reduce((sum, item) => sum + elisionSavings(item), 0);
      if (reclaimable >= 2 * MIN_SAVINGS) expect(admitted).toEqual(expect.arrayContaining(['elide', 'compacted', 'cache_aware']));
    });
  }

  it('rendered a verified plan of every file strategy on some fixture', () => {
    console.log(`rendered plans per strategy: ${JSON.stringify(Object.fromEntries(renderedBy))}`);
    for (const id of ['elide', 'compacted', 'structured', 'scored', 'micro', 'middle', 'cache_aware', 'cliff', 'agentic', 'auto']) {
      expect(renderedBy.get(id) ?? 0, id).toBeGreaterThan(0);
    }
  });
});
