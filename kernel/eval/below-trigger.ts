/**
 * A session under its trigger gets "no plan (below_trigger)" from every strategy, and the table then
 * reads as if none could do anything. The trigger is why, and a lower one for this run is the remedy.
 */
import { formatCount } from '../text/human.js';

interface RowOutcome {
  status: string;
  reason_code?: string | null;
}

/** The warning for a table whose every row stopped at the trigger, naming the flags that compare them; else null. */
export function belowTriggerWarning(rows: readonly RowOutcome[], contextTokens: number, triggerTokens: number, floorTokens: number): string | null {
  if (rows.length === 0 || !rows.every((r) => r.status === 'no_plan' && r.reason_code === 'below_trigger')) return null;
  // A trigger at the context rounded down fires; the floor must stay below it, or the bounds refuse it.
  const trigger = Math.max(2, Math.floor(contextTokens / 1000) * 1000 || contextTokens);
  const floor = floorTokens < trigger ? '' : ` --floor ${Math.floor(trigger / 2)}`;
  return (
    `the context (~${formatCount(contextTokens)} tokens) is under the trigger ${formatCount(triggerTokens)}, so no strategy planned anything; ` +
    `to compare them on this session, lower the trigger for this run: --trigger ${trigger}${floor}`
  );
}
