import { describe, expect, it } from 'vitest';
import { checkStrategyParams } from '../../../kernel/plugins/host/strategy-params.js';
import { AGENTIC_PARAMS_SCHEMA, proposeAgentic } from '../../../plugins/strategies-core/src/agentic.js';
import type { Edit } from '../../../schemas/generated/types.js';
import { proposeParams, tableProposer } from '../../fixtures/transcripts/params.js';
import { codingSession } from '../../fixtures/transcripts/sessions.js';

const policy = { trigger_tokens: 8000, floor_tokens: 6000, keep_recent_tool_outputs: 2 };
const editorEdits: Edit[] = [{ op: 'elide', line_indexes: [10, 13], stub_template: '[output elided by gobstopper: {bytes} bytes]' }];
const editorPlan = { strategy: 'my-editor', rationale: 'editor', edits: editorEdits, context_tokens_before: 10_610, context_tokens_after: 8658 };

describe('agentic', () => {
  it('has no plan, and says how to configure one, when no editor is set', async () => {
    const host = tableProposer({});
    const result = await proposeAgentic(proposeParams(codingSession().items, { policy, strategyId: 'agentic' }), host.propose);
    expect(result.edits).toEqual([]);
    expect(result.rationale).toMatch(/^no editor configured; set strategy_params.editor to the id of a strategy an installed or built-in plugin bundle serves \(a trusted command is used as a preset of its own: --preset <name>\)/);
    expect(host.asked).toEqual([]);
  });

  it("forwards the editor's validated plan", async () => {
    const host = tableProposer({ 'my-editor': { status: 'plan', plan: editorPlan, prefix_tokens: 1000 } });
    const params = proposeParams(codingSession().items, { policy: { ...policy, strategy_params: { editor: 'my-editor' } }, strategyId: 'agentic' });
    const result = await proposeAgentic(params, host.propose);
    expect(host.asked).toEqual(['my-editor']);
    expect(result).toEqual({
      edits: editorEdits,
      rationale: "editor 'my-editor' proposed 1 edits; projected context 8658 (floor 6000)",
      context_tokens_after: 8658,
    });
  });

  it('treats an empty proposal as the editor deferring', async () => {
    const host = tableProposer({ 'my-editor': { status: 'no_plan', reason_code: 'empty_external_edits' } });
    const params = proposeParams(codingSession().items, { policy: { ...policy, strategy_params: { editor: 'my-editor' } }, strategyId: 'agentic' });
    expect(await proposeAgentic(params, host.propose)).toEqual({ edits: [], rationale: "editor 'my-editor' deferred (empty_external_edits)" });
  });

  it('its params_schema refuses agentic itself and the auto selector as the editor where the config is checked', async () => {
    const served = ['agentic', 'auto', 'elide', 'my-editor'];
    await expect(checkStrategyParams('agentic', AGENTIC_PARAMS_SCHEMA, { editor: 'my-editor' }, served)).resolves.toBeUndefined();
    for (const editor of ['agentic', 'auto']) {
      await expect(checkStrategyParams('agentic', AGENTIC_PARAMS_SCHEMA, { editor }, served)).rejects.toMatchObject({ code: 'invalid_strategy_params', message: expect.stringContaining(`at /editor: must not be "${editor}"`) });
    }
  });

  it('fails loudly when the editor fails, proposes a control edit, or is agentic itself', async () => {
    const withEditor = (editor: string) =>
      proposeParams(codingSession().items, { policy: { ...policy, strategy_params: { editor } }, strategyId: 'agentic' });
    const failing = tableProposer({ 'my-editor': { status: 'error', message: 'invalid elision bounds or stub template' } });
    await expect(proposeAgentic(withEditor('my-editor'), failing.propose)).rejects.toThrow(/editor 'my-editor' failed: invalid elision bounds/);
    const control = tableProposer({ 'my-editor': { status: 'plan', plan: { ...editorPlan, edits: [{ op: 'provider_compact', control: '/compact' }] } } });
    await expect(proposeAgentic(withEditor('my-editor'), control.propose)).rejects.toThrow(/provider_compact/);
    await expect(proposeAgentic(withEditor('agentic'), tableProposer({}).propose)).rejects.toThrow(/cannot be the agentic strategy itself/);
  });

  it('returns no plan below the trigger without asking the editor', async () => {
    const host = tableProposer({});
    const params = proposeParams(codingSession().items, { policy: { ...policy, trigger_tokens: 10_611, strategy_params: { editor: 'e' } } });
    expect((await proposeAgentic(params, host.propose)).edits).toEqual([]);
    expect(host.asked).toEqual([]);
  });
});
