/** The `strategies-control` bundle: strategies that ask the provider or its API layer instead of rewriting a file. */
import type { PluginDefinition } from '../../../sdk/serve.js';
import { NO_PARAMS_SCHEMA } from '../../../sdk/strategy/plan.js';
import { CACHE_EDIT_PROVIDER, proposeCacheEdits } from './cache-edits.js';
import { proposeSawtooth } from './sawtooth.js';

export const definition: PluginDefinition = {
  id: 'strategies-control',
  version: '0.1.0',
  strategies: {
    sawtooth: {
      info: {
        description: "Fires the provider's own compaction (its native control) once the context crosses the trigger; touches no file.",
        kind: 'control',
        params_schema: NO_PARAMS_SCHEMA,
      },
      propose: (params) => proposeSawtooth(params),
    },
    cache_edits: {
      info: {
        description: 'Claude Code only: lists the tool_use ids of the stale tool results the scorer values least, for the API layer to drop; never rewrites a transcript.',
        kind: 'control',
        provider_ids: [CACHE_EDIT_PROVIDER],
        params_schema: NO_PARAMS_SCHEMA,
        uses_scorer: true,
      },
      propose: (params, ctx) => proposeCacheEdits(params, (candidates) => ctx.score(candidates)),
    },
  },
};
