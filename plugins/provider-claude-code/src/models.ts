/**
 * Context windows known from a Claude model name. Claude Code runs every current Claude model with
 * a 200k window unless the model id asks for the 1M beta (`[1m]` suffix); names we cannot place
 * (aliases, `<synthetic>`, future families) get no window rather than a guess.
 */

const ONE_MILLION = /\[1m\]$/i;
const KNOWN_200K = /^(?:[a-z]+\.)*(?:anthropic\.)?claude-(?:3|3-5|3-7|instant|(?:opus|sonnet|haiku)-(?:3|4))(?:[-.@:]|$)/i;

export function modelContextWindow(model: string | null | undefined): number | null {
  if (!model) return null;
  if (ONE_MILLION.test(model)) return 1_000_000;
  if (KNOWN_200K.test(model)) return 200_000;
  return null;
}

/** Records the client writes itself (API errors, "No response requested.") carry this model. */
export const SYNTHETIC_MODEL = '<synthetic>';
