/**
 * tool_use / tool_result pairing on the live branch. The client drops an unanswered tool_use, an
 * orphan tool_result, or both when their ids disagree (realclients.md §1.4), so each of these is a
 * change of context nobody asked for.
 */
import { isLive, type LiveBranch } from './branch.js';
import type { RecordTable } from './record-table.js';

export interface Pairing {
  /** A tool_use id already used by an earlier live tool_use: [line, first line]. */
  duplicateCalls: Array<{ line: number; firstLine: number }>;
  /** Live tool_use records whose id no later live tool_result answers. */
  unansweredCalls: number[];
  /** Live tool_result records answering no earlier live tool_use. */
  orphanResults: number[];
  /** Live tool_result records answering a call that was already answered. */
  duplicateResults: number[];
}

export function livePairing(t: RecordTable, branch: LiveBranch): Pairing {
  const calls = new Map<string, number>();
  const answered = new Set<string>();
  const out: Pairing = { duplicateCalls: [], unansweredCalls: [], orphanResults: [], duplicateResults: [] };
  for (let i = 0; i < t.length; i += 1) {
    const uses = t.toolUseIds[i];
    const results = t.toolResultIds[i];
    if ((!uses && !results) || !isLive(branch, t, i)) continue;
    const type = t.type[i];
    if (type === 'assistant' && uses) {
      for (const id of uses) {
        const first = calls.get(id);
        if (first !== undefined) out.duplicateCalls.push({ line: i, firstLine: first });
        else calls.set(id, i);
      }
    } else if (type === 'user' && results) {
      let orphan = false;
      let duplicate = false;
      for (const id of results) {
        if (!calls.has(id)) orphan = true;
        else if (answered.has(id)) duplicate = true;
        else answered.add(id);
      }
      if (orphan) out.orphanResults.push(i);
      if (duplicate) out.duplicateResults.push(i);
    }
  }
  const unanswered = new Set<number>();
  for (const [id, line] of calls) if (!answered.has(id)) unanswered.add(line);
  out.unansweredCalls = [...unanswered].sort((a, b) => a - b);
  return out;
}
