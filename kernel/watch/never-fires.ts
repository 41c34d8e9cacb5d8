/**
 * A trigger at or above where a client compacts by itself is never reached: the default
 * (250,000) is above 90% of both Claude Code's and Codex's windows, so a watch under it reports
 * "under the trigger" pass after pass and never compacts. plan says so for one session; a watch
 * says it once for each trigger and window it meets, as it says a loose session table once
 * (nothing of this is saved with the watch state, so a restarted watch says it again).
 */
import { nativeTriggerTokens, triggerNeverReached } from '../policy/explain.js';
import { formatCount } from '../text/human.js';

export interface NeverFires {
  provider: string;
  window: number;
  trigger: number;
  session_id: string;
}

/** The session's case, when its trigger can never fire; adaptive tuning moves the trigger, so it is left to tune. */
export function neverFires(provider: string, sessionId: string, window: number | null | undefined, trigger: number, adaptive: boolean): NeverFires | null {
  if (adaptive || !window || !triggerNeverReached(trigger, window)) return null;
  return { provider, window, trigger, session_id: sessionId };
}

/** One warning per provider, trigger and window this pass found and `said` does not hold yet. */
export function neverFiresWarnings(said: Set<string>, found: readonly NeverFires[]): string[] {
  const groups = new Map<string, NeverFires[]>();
  for (const f of found) {
    const key = `${f.provider}\u0000${f.trigger}\u0000${f.window}`;
    groups.set(key, [...(groups.get(key) ?? []), f]);
  }
  const fresh = [...groups].filter(([key]) => !said.has(key));
  for (const [key] of fresh) said.add(key);
  return fresh.map(([, group]) => {
    const { provider, window, trigger } = group[0]!;
    const count = group.length === 1 ? `its session ${group[0]!.session_id}` : `its ${group.length} sessions`;
    return (
      `the trigger ${formatCount(trigger)} is at or above where ${provider} compacts by itself (~${formatCount(nativeTriggerTokens(window))} of a ${formatCount(window)}-token window), ` +
      `so it never fires for ${count}; lower trigger_tokens in [policy] or [provider.${provider}] (gobstopper explain ${group[0]!.session_id} says why)`
    );
  });
}
