/** The `strategy-elide` bundle: one strategy, on its own so a user can swap it for another bundle. */
import type { PluginDefinition } from '../../../sdk/serve.js';
import { NO_PARAMS_SCHEMA } from '../../../sdk/strategy/plan.js';
import { proposeElide } from './elide.js';

export const definition: PluginDefinition = {
  id: 'strategy-elide',
  version: '0.1.0',
  strategies: {
    elide: {
      info: {
        description: 'Observation masking: replaces the oldest stale tool outputs with a stub until the context reaches the floor.',
        kind: 'file',
        params_schema: NO_PARAMS_SCHEMA,
      },
      propose: (params) => proposeElide(params),
    },
  },
};
