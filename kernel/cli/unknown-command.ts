/**
 * The command a mistyped one probably meant, for both places a command name can be wrong: the
 * command line itself (`gobstopper detcet`) and the words given to help (`gobstopper help detcet`).
 */
import { toConfiguredId, type Interfaces } from '@oclif/core';
import { inHiddenGroup } from './help-class.js';
import { editDistance, nearEnough } from '../text/edit-distance.js';

/**
 * The words that were meant as a command, and the nearest one: `aply 7d3f` is the command `aply`
 * (did you mean apply?) with an argument, `plugin lst` a mistyped `plugin list`. Of the leading
 * words, the run nearest to a command wins, the shorter run on a tie, so an argument is never
 * taken for part of the command (`plugin ad .` is `plugin ad`). Without a near command the first
 * word is the unknown one, or the first two after a topic (`plugin nosuch`); `suggestion` is then null.
 */
export function unknownCommandWords(config: Interfaces.Config, words: readonly string[]): { typed: string; suggestion: string | null } {
  let best: { typed: string; id: string; distance: number } | null = null;
  for (let n = 1; n <= words.length; n += 1) {
    const typed = words.slice(0, n).join(' ');
    const near = nearestCommand(config, typed);
    if (near && (!best || near.distance < best.distance)) best = { typed, ...near };
  }
  if (best) return { typed: best.typed, suggestion: best.id };
  const named = words.length > 1 && config.topics.some((t) => t.name === words[0]) ? words.slice(0, 2) : words.slice(0, 1);
  return { typed: named.join(' '), suggestion: null };
}

/** "(did you mean 'plan'?)" with a space before it, or nothing. */
export function didYouMean(suggestion: string | null): string {
  return suggestion ? ` (did you mean '${suggestion}'?)` : '';
}

/** The visible command nearest to what was typed, when it is near enough to suggest. */
function nearestCommand(config: Interfaces.Config, typed: string): { id: string; distance: number } | null {
  let best: { id: string; distance: number } | null = null;
  for (const command of config.commands) {
    if (command.hidden || inHiddenGroup(config, command.id)) continue;
    const id = toConfiguredId(command.id, config);
    // Commands are lower case; DETECT typed with caps lock on means detect.
    const distance = editDistance(typed.toLowerCase(), id);
    if (!best || distance < best.distance) best = { id, distance };
  }
  return best && nearEnough(best.distance, best.id) ? best : null;
}
