/**
 * A `[sessions."<prefix>"]` table keyed by a prefix of a session id (or the id in another case)
 * never applies. plan warns of it on every run; a watch that did would repeat the same line every
 * pass for as long as it runs. So a watch says it once per table, while some listed session keeps
 * the table loose: a table fixed and then broken again is said again, and a restarted watch says
 * every one again (nothing of this is saved with the watch state).
 */
import { unappliedSessionNote } from '../config/resolve-config.js';

/** Sessions named in one warning; a short prefix can match hundreds. */
const IDS_SHOWN = 3;

/**
 * The warnings for tables this pass found loose (`found`: table key → the ids of the listed sessions
 * it names loosely) that `said` does not hold yet; `said` then holds exactly this pass's tables.
 */
export function looseTableWarnings(said: Set<string>, found: ReadonlyMap<string, readonly string[]>): string[] {
  for (const key of said) if (!found.has(key)) said.delete(key);
  const fresh = [...found].filter(([key]) => !said.has(key));
  for (const [key] of fresh) said.add(key);
  return fresh.map(([key, ids]) => {
    const shown = ids.length <= IDS_SHOWN ? ids.join(', ') : `${ids.slice(0, IDS_SHOWN).join(', ')} and ${ids.length - IDS_SHOWN} more`;
    return `${unappliedSessionNote({ unapplied_session_tables: [key] })} (${shown})`;
  });
}
