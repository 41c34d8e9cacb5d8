/**
 * Failures a watch meets again every pass: a session whose vault or disk failure it tries again
 * each pass, a pass that a broken config stops. Printed each time, one such failure fills an hour
 * of a terminal with the same lines (120 passes at the default 30 s), and what changed is lost among
 * them. So the terminal is told of each once while it lasts, and again once it changes or has been
 * over for a pass; --json still reports every pass whole, for whatever reads it.
 */
import type { WatchDecision } from '../../schemas/generated/types.js';

export class FailuresSaid {
  /** Per session (provider and path), the code of the failure said last and still lasting. */
  private sessions = new Map<string, string>();
  /** The failure of the last pass, when one was said and passes have failed since. */
  private passFailure: string | null = null;

  /**
   * The failed decisions of this pass that the last pass said already: the same session, failing
   * the same way. Keyed by code, since a message may name a temporary file, another each time.
   */
  repeated(decisions: readonly WatchDecision[]): Set<WatchDecision> {
    const now = new Map<string, string>();
    const repeats = new Set<WatchDecision>();
    for (const d of decisions) {
      if (d.outcome !== 'failed') continue;
      const key = `${d.provider}\u0000${d.path}`;
      const code = d.error?.code ?? '';
      if (this.sessions.get(key) === code) repeats.add(d);
      now.set(key, code);
    }
    this.sessions = now;
    return repeats;
  }

  /** Whether a pass that failed with `said` is news: not what the last pass failed with. */
  passFailed(said: string): boolean {
    const news = said !== this.passFailure;
    this.passFailure = said;
    return news;
  }

  /** A pass ran: true when it ends a spell of failed passes, which the person was told of. */
  passRan(): boolean {
    const ended = this.passFailure !== null;
    this.passFailure = null;
    return ended;
  }
}
