/**
 * Closed marker vocabularies (case-insensitive substrings). The state card and the heuristic scorer
 * use different error lists on purpose: the card sorts text into sections, the scorer only rewards
 * failures worth remembering.
 */

export const CARD_ERROR_MARKERS = [
  'error', 'failed', 'failure', 'panic', 'exception', 'traceback', 'enoent', 'eacces', 'non-zero', 'nonzero',
  'exit code', 'stderr:', 'command failed', 'permission denied', 'no such file', 'not found', 'timed out', 'killed', 'abort',
] as const;

export const OPEN_TASK_MARKERS = ['todo', 'fixme', 'pending', 'open:', 'follow up', 'follow-up'] as const;

export const SCORER_ERROR_MARKERS = [
  'error', 'failed', 'failure', 'panic', 'exception', 'traceback', 'enoent', 'eacces', 'non-zero', 'nonzero', 'exit code', 'stderr:',
] as const;

function containsAny(text: string, markers: readonly string[]): boolean {
  const lower = text.toLowerCase();
  return markers.some((m) => lower.includes(m));
}

export const hasCardErrorMarker = (text: string) => containsAny(text, CARD_ERROR_MARKERS);
export const hasOpenTaskMarker = (text: string) => containsAny(text, OPEN_TASK_MARKERS);
export const hasScorerErrorMarker = (text: string) => containsAny(text, SCORER_ERROR_MARKERS);
