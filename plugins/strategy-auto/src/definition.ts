/** The `strategy-auto` bundle: the default selector, a plugin like any other strategy. */
import type { PluginDefinition } from '../../../sdk/serve.js';
import { AUTO_PARAMS_SCHEMA, proposeAuto } from './auto.js';

export const definition: PluginDefinition = {
  id: 'strategy-auto',
  version: '0.1.0',
  strategies: {
    auto: {
      info: {
        description:
          "Live sessions: the provider's own compaction (cache_edits on Claude, else sawtooth). Idle: the best validated file plan by savings x (preserved prefix / context)^3.",
        kind: 'selector',
        params_schema: AUTO_PARAMS_SCHEMA,
      },
      propose: (params, ctx) => proposeAuto(params, (id) => ctx.propose(id)),
    },
  },
};
