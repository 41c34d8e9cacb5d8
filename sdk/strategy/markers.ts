/**
 * Closed marker vocabularies (case-insensitive substrings). The state card and the heuristic scorer
 * use different error lists on purpose: the card sorts text into sections, the scorer only rewards
 * failures worth remembering.
 */
import { literalAlternatives } from '../literal-pattern.js';

export const CARD_ERROR_MARKERS = [
  'error', 'failed', 'failure', 'panic', 'exception', 'traceback', 'enoent', 'eacces', 'non-zero', 'nonzero',
  'exit code', 'stderr:', 'command failed', 'permission denied', 'no such file', 'not found', 'timed out', 'killed', 'abort',
] as const;

export const OPEN_TASK_MARKERS = ['todo', 'fixme', 'pending', 'open:', 'follow up', 'follow-up'] as const;

export const SCORER_ERROR_MARKERS = [
  'error', 'failed', 'failure', 'panic', 'exception', 'traceback', 'enoent', 'eacces', 'non-zero', 'nonzero', 'exit code', 'stderr:',
] as const;

/**
 * Whether the lowercased text contains any of the markers, as one scan: a pattern of the markers as
 * literal alternatives matches exactly where some marker is a substring, at half the cost of
 * looking for each in turn (a card sorts every chosen record, a scorer every candidate).
 */
function anyOf(markers: readonly string[]): (text: string) => boolean {
  const pattern = new RegExp(literalAlternatives(markers));
  return (text) => pattern.test(text.toLowerCase());
}

export const hasCardErrorMarker = anyOf(CARD_ERROR_MARKERS);
export const hasOpenTaskMarker = anyOf(OPEN_TASK_MARKERS);
export const hasScorerErrorMarker = anyOf(SCORER_ERROR_MARKERS);
