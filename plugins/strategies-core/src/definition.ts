/**
 * The `strategies-core` bundle: the file strategies that rewrite a copy of the transcript, and the
 * selectors that compare them. They share one process so the selectors' candidates read the
 * transcript's items once; each id can still be replaced on its own by an installed bundle.
 */
import type { PluginDefinition } from '../../../sdk/serve.js';
import { NO_PARAMS_SCHEMA } from '../../../sdk/strategy/plan.js';
import { AGENTIC_PARAMS_SCHEMA, proposeAgentic } from './agentic.js';
import { AUTO_PARAMS_SCHEMA, proposeAuto } from './auto.js';
import { proposeCacheAware } from './cache-aware.js';
import { proposeCliff } from './cliff.js';
import { proposeCompacted } from './compacted.js';
import { proposeDedupe } from './dedupe.js';
import { proposeElide } from './elide.js';
import { MICRO_PARAMS_SCHEMA, proposeMicro } from './micro.js';
import { proposeMiddle } from './middle.js';
import { proposeScored } from './scored.js';
import { proposeStructured } from './structured.js';

const file = (description: string, params_schema: object = NO_PARAMS_SCHEMA) => ({ description, kind: 'file' as const, params_schema });

export const definition: PluginDefinition = {
  id: 'strategies-core',
  version: '0.1.0',
  strategies: {
    elide: {
      info: file('Observation masking: replaces the oldest stale tool outputs with a stub until the context reaches the floor.'),
      propose: (params) => proposeElide(params),
    },
    compacted: {
      info: file('Elides the oldest stale tool outputs down to the floor and appends a state card describing them.'),
      propose: (params) => proposeCompacted(params),
    },
    structured: {
      info: file('Masks every stale tool output before the newest 24 records and appends a metadata-derived state card.'),
      propose: (params) => proposeStructured(params),
    },
    scored: {
      info: { ...file('Elides the stale outputs the configured scorer rates least worth keeping, inside the smallest tailward window; honours keep_score_threshold.'), uses_scorer: true },
      propose: (params, ctx) => proposeScored(params, (candidates) => ctx.score(candidates)),
    },
    dedupe: {
      info: file('Elides older exact duplicates (same tool label and payload sha256) of stale tool outputs, with a state card.'),
      propose: (params) => proposeDedupe(params),
    },
    micro: {
      info: file('Keeps the newest outputs of each tool and elides the older ones outside the protected tail, with a state card.', MICRO_PARAMS_SCHEMA),
      propose: (params) => proposeMicro(params),
    },
    middle: {
      info: file('Keeps the oldest and newest tool outputs and elides the middle ones first, with a state card.'),
      propose: (params) => proposeMiddle(params),
    },
    cache_aware: {
      info: file('Elides the newest stale outputs right before the protected tail so the prompt-cache prefix survives, with a state card.'),
      propose: (params) => proposeCacheAware(params),
    },
    cliff: {
      info: file('Keeps the head and the newest keep_recent_turns assistant steps verbatim and drops older tool results over result_max_bytes.'),
      propose: (params) => proposeCliff(params),
    },
    agentic: {
      // A selector: its plan is another strategy's, obtained through host/propose.
      info: {
        description: 'Forwards the validated plan of the editor strategy named in strategy_params.editor; no plan without an editor.',
        kind: 'selector',
        params_schema: AGENTIC_PARAMS_SCHEMA,
      },
      propose: (params, ctx) => proposeAgentic(params, (id) => ctx.propose(id)),
    },
    auto: {
      info: {
        description:
          "Live sessions: the provider's own compaction (cache_edits on Claude, else sawtooth). Idle: the best validated file plan by savings x (preserved prefix / context)^3.",
        kind: 'selector',
        params_schema: AUTO_PARAMS_SCHEMA,
      },
      // Its siblings in this bundle say which of them use the scorer.
      propose: (params, ctx) => proposeAuto(params, (id) => ctx.propose(id), (id) => definition.strategies?.[id]?.info.uses_scorer === true),
    },
  },
};
