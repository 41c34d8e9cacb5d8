/**
 * When each session was last compacted, by any command: the events log holds every applied
 * compaction, whether a watch of these providers, a watch of others (each keeps its own state) or
 * `gobstopper apply` made it, so min_interval_secs holds across all of them.
 */
import { isAppliedCompaction, readEvents } from '../publish/events.js';

export type LastApplied = ReadonlyMap<string, number>;

export const lastAppliedKey = (provider: string, sessionId: string) => `${provider}\u0000${sessionId}`;

/** The newest applied transcript compaction of each session, in unix seconds; a log it cannot read counts as none. */
export async function lastAppliedBySession(env: NodeJS.ProcessEnv): Promise<LastApplied> {
  const { events } = await readEvents({ env });
  const last = new Map<string, number>();
  for (const e of events) {
    if (!isAppliedCompaction(e)) continue;
    const key = lastAppliedKey(e.provider, e.session_id);
    if (e.ts > (last.get(key) ?? -Infinity)) last.set(key, e.ts);
  }
  return last;
}
