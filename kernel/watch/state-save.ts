/**
 * Saving the watch state after a pass. By then the pass has done its work: forks are published and
 * recorded in the vault, and the pass has yet to report them. A state that cannot be saved (a data
 * directory made read-only, a full disk, a directory put where the file goes) loses none of that,
 * only the memory that spares the next watch from deciding again (and it finds the forks already
 * published rather than writing new ones). So it is a warning, never the pass's failure, which
 * would leave those forks unreported and fail `watch --once`.
 */
import { GobstopperError } from '../errors.js';
import { systemErrorCode } from '../filesystem-codes.js';
import { errorMessage } from '../filesystem-message.js';
import { ReadBackMismatchError } from '../vault/private-fs.js';
import { saveWatchState, type WatchState } from './watch-state.js';

/**
 * Saves `state`; when that fails, the warning to give, or null once a failure of the same kind was
 * warned of (a running watch keeps its decisions in memory, so repeating it every pass would only be
 * noise); a save that succeeds again ends the spell.
 */
export async function saveOrWarn(state: WatchState): Promise<string | null> {
  try {
    await saveWatchState(state);
    state.saveFailureSaid = null;
    return null;
  } catch (error) {
    // A failure of the file system (it names the call) is warned of; a fault of the code still throws.
    if (!(error instanceof GobstopperError) && !(error instanceof ReadBackMismatchError) && systemErrorCode(error) === null) throw error;
    // By its code: the message names a temporary file, another each time.
    const said = String((error as { code?: unknown }).code);
    if (said === state.saveFailureSaid) return null;
    state.saveFailureSaid = said;
    return `the watch state was not saved (${errorMessage(error)}); this watch remembers its decisions while it runs, but the next one to start makes them again`;
  }
}
