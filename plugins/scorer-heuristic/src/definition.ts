/** The `scorer-heuristic` bundle: the default scorer the host routes host/score to. */
import type { PluginDefinition } from '../../../sdk/serve.js';
import type { TranscriptItem } from '../../../schemas/generated/types.js';
import { scoreHeuristic } from './heuristic.js';
import { transcriptPart } from './scoring-context.js';

export const definition: PluginDefinition = {
  id: 'scorer-heuristic',
  version: '0.1.0',
  // Items sent ahead (auto's and scored's plans are being asked for): index them before the call.
  itemsArrived: (items) => void transcriptPart(items as readonly TranscriptItem[]),
  scorers: {
    heuristic: {
      info: {
        description:
          'Deterministic keep probability from metadata: recency, tool type, error markers, rarity (idf), later references, goal overlap, superseded and near-duplicate outputs, tail parentage, position.',
      },
      score: (params) => ({
        scores: scoreHeuristic(params.items, params.candidates),
        summary: `${params.candidates.length} candidate${params.candidates.length === 1 ? '' : 's'} scored`,
      }),
    },
  },
};
