/**
 * oclif refuses a flag a command does not take with "Nonexistent flag: --x" and nothing else (its
 * "see --help" line is cut to keep errors on one line). This puts back what to do: the flag that
 * was probably meant, and where the command's flags are listed.
 */
import { editDistance, nearEnough } from '../text/edit-distance.js';

export interface FlagSpec {
  name: string;
  hidden?: boolean;
}

/** The command's visible flag nearest to one typed (`--flor`, or `--trigger-tokens` as the config key spells it). */
export function nearestFlag(typed: string, flags: readonly FlagSpec[]): string | null {
  // `--name=value` is refused whole; only the name was mistyped. Config keys use `_`, flags `-`.
  const name = typed.replace(/^-+/, '').split('=')[0]!.toLowerCase().replace(/_/g, '-');
  if (name.length < 2) return null;
  let best: { name: string; distance: number } | null = null;
  for (const flag of flags) {
    if (flag.hidden) continue;
    // `--trigger-tokens` is the config key trigger_tokens, which `--trigger` sets.
    const distance = name.startsWith(`${flag.name}-`) ? 0 : editDistance(name, flag.name);
    if ((distance === 0 || nearEnough(distance, flag.name)) && (!best || distance < best.distance)) best = { name: flag.name, distance };
  }
  return best ? `--${best.name}` : null;
}

/**
 * "Nonexistent flags: --flor, --x; gobstopper plan --help lists its flags", each flag with the one
 * probably meant, or null when `message` is not oclif's refusal of an unknown flag.
 */
export function unknownFlagMessage(message: string, typed: readonly string[], commandId: string, flags: readonly FlagSpec[]): string | null {
  const head = /^Nonexistent flags?: /.exec(message);
  if (!head || typed.length === 0) return null;
  const named = typed.map((t) => {
    const near = nearestFlag(t, flags);
    return near ? `${t} (did you mean ${near}?)` : t;
  });
  return `${head[0]}${named.join(', ')}; gobstopper ${commandId} --help lists its flags`;
}

/**
 * "Unexpected argument: b (gobstopper vault --help lists what it takes)", or null when `message` is
 * not oclif's refusal of arguments past the ones a command takes. oclif's own help line is cut with
 * the rest of its lines.
 */
export function unexpectedArgumentMessage(message: string, commandId: string): string | null {
  const refusal = /^Unexpected arguments?: .*/.exec(message);
  return refusal ? `${refusal[0]} (gobstopper ${commandId} --help lists what it takes)` : null;
}
