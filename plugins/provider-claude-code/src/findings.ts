/**
 * Resume-validity findings for a Claude transcript. The real client never refuses a damaged chain:
 * it drops history, re-links records or merges messages without a word (realclients.md §1.4). So
 * every such repair is an error here: a rewrite that triggers one changes what the model sees, and
 * nothing else would notice.
 *
 * Messages carry line numbers and counts only, never record content.
 */
import type { Finding, SessionKind } from '../../../schemas/generated/types.js';
import type { LiveBranch } from './branch.js';
import { FLAG_RESULT_ONLY, type RecordTable } from './record-table.js';
import type { LineProblem, ScanRows } from './scan.js';
import { livePairing, type Pairing } from './pairing.js';

/** At most this many findings of one code are listed; the rest are counted in one more. */
const PER_CODE_LIMIT = 50;
/** How far up the tree a split response record may be from its first record. */
const SIBLING_WALK_LIMIT = 512;

class FindingList {
  private readonly out: Finding[] = [];
  private readonly counts = new Map<string, number>();

  add(severity: Finding['severity'], code: string, message: string, line: number | null): void {
    const n = (this.counts.get(code) ?? 0) + 1;
    this.counts.set(code, n);
    if (n <= PER_CODE_LIMIT) this.out.push({ severity, code, message, line_index: line });
  }

  finish(): Finding[] {
    for (const [code, n] of this.counts) {
      if (n <= PER_CODE_LIMIT) continue;
      const severity = this.out.find((f) => f.code === code)!.severity;
      this.out.push({ severity, code, message: `${n - PER_CODE_LIMIT} more findings like the above`, line_index: null });
    }
    return this.out;
  }
}

const at = (line: number) => `line ${line + 1}`;

function lineProblems(list: FindingList, problems: readonly LineProblem[], recordCount: number): void {
  for (const p of problems) {
    const last = p.line === recordCount - 1;
    switch (p.state) {
      case 'blank':
        list.add('warning', 'blank_line', `${at(p.line)} is blank`, p.line);
        break;
      case 'invalid_json':
        if (last) list.add('warning', 'torn_final_line', `the final ${at(p.line)} is not valid JSON (a write in progress or a torn write)`, p.line);
        else list.add('error', 'invalid_json', `${at(p.line)} is not valid JSON; the client skips it silently`, p.line);
        break;
      case 'invalid_utf8':
        list.add('error', 'invalid_utf8', `${at(p.line)} is not valid UTF-8`, p.line);
        break;
      case 'not_object':
        list.add('error', 'not_an_object', `${at(p.line)} is not a JSON object`, p.line);
        break;
      case 'invalid_record':
        list.add('error', 'invalid_record', `${at(p.line)} ${p.reason}`, p.line);
        break;
      case 'invalid_block':
        list.add('error', 'invalid_content_block', `${at(p.line)} ${p.reason}; the client drops it`, p.line);
        break;
      case 'oversized':
        list.add('error', 'oversized_record', `${at(p.line)} ${p.reason}`, p.line);
        break;
    }
  }
}

/**
 * Why a last-prompt's leaf is not in the tree: no record holds its uuid, or the record that does
 * is invalid, which is no node of the tree and so cannot be the leaf.
 */
function missingLeafMessage(t: RecordTable, problems: readonly LineProblem[], lastPromptLine: number): string {
  const leafUuid = t.leafUuid.get(lastPromptLine);
  const holder = leafUuid === undefined ? undefined : problems.find((p) => p.uuid === leafUuid);
  const fallback = 'the client falls back to the last leaf in the file';
  if (holder === undefined) return `the last-prompt record on ${at(lastPromptLine)} names a leaf that does not exist; ${fallback}`;
  return `the last-prompt record on ${at(lastPromptLine)} names the record on ${at(holder.line)} as its leaf, but that record is invalid (${at(holder.line)} ${holder.reason}) and cannot be the leaf; ${fallback}`;
}

function treeFindings(list: FindingList, t: RecordTable, branch: LiveBranch, problems: readonly LineProblem[]): void {
  for (const d of branch.duplicateUuids) {
    list.add('error', 'duplicate_uuid', `${at(d.line)} reuses the uuid of ${at(d.firstLine)}; the client keeps only the later record`, d.line);
  }
  for (const line of branch.cycleLines) list.add('error', 'parent_cycle', `the parent chain through ${at(line)} loops back on itself`, line);
  if (branch.danglingLine >= 0) {
    list.add(
      'error',
      'dangling_parent',
      `${at(branch.danglingLine)} on the live branch names a parent that does not exist; the client re-links or drops the history before it`,
      branch.danglingLine,
    );
  }
  for (const line of branch.danglingOffBranch) {
    list.add('warning', 'dangling_parent_off_branch', `${at(line)} (off the live branch) names a parent that does not exist`, line);
  }
  for (const line of branch.parentAfterChild) list.add('warning', 'parent_after_child', `${at(line)} names a parent that is written after it`, line);
  if (branch.droppedHistoryLine >= 0) {
    list.add(
      'error',
      'dropped_history',
      `the live branch starts at a root on ${at(branch.rootLine)} although conversation records exist from ${at(branch.droppedHistoryLine)}; the client drops them`,
      branch.rootLine,
    );
  }
  const lp = branch.lastPrompt;
  if (lp && lp.status === 'invalid') list.add('error', 'invalid_leaf', `the last-prompt record on ${at(lp.line)} has no usable leafUuid`, lp.line);
  if (lp && lp.status === 'missing') {
    list.add('error', 'missing_leaf', missingLeafMessage(t, problems, lp.line), lp.line);
  }
  if (lp && lp.status === 'not_terminal') {
    list.add('warning', 'leaf_not_terminal', `the last-prompt record on ${at(lp.line)} names a record that has replies; the client uses the last leaf in the file`, lp.line);
  }
  sharedMessageIds(list, t, branch);
}

/**
 * Records of one API response share `message.id` and hang below each other. Records that share an
 * id without being one response are merged by the client into one message.
 */
function sharedMessageIds(list: FindingList, t: RecordTable, branch: LiveBranch): void {
  let responses = 0;
  for (let i = 0; i < t.length; i += 1) if (t.response[i]! >= responses) responses = t.response[i]! + 1;
  const seen = new Uint8Array(responses);
  // A later record of a response hangs below an earlier one, possibly through progress records
  // or the results of its own earlier calls (tools run while the response streams), but never
  // through another reply or a prompt.
  const passable = (j: number) => t.type[j] !== 'assistant' && !(t.type[j] === 'user' && !t.has(j, FLAG_RESULT_ONLY));
  for (let i = 0; i < t.length; i += 1) {
    const r = t.response[i]!;
    if (r < 0 || t.uuid[i] === null) continue;
    if (seen[r] === 0) {
      seen[r] = 1;
      continue;
    }
    let p = branch.parentOf(i);
    let steps = 0;
    while (p >= 0 && passable(p) && steps < SIBLING_WALK_LIMIT) {
      p = branch.parentOf(p);
      steps += 1;
    }
    if (p < 0 || t.response[p] !== r) {
      list.add('error', 'shared_message_id', `${at(i)} shares a message id with a record of another response; the client merges them into one message`, i);
    }
  }
}

function pairingFindings(list: FindingList, p: Pairing): void {
  for (const d of p.duplicateCalls) list.add('error', 'duplicate_tool_use_id', `${at(d.line)} repeats a tool_use id first used on ${at(d.firstLine)}`, d.line);
  for (const line of p.unansweredCalls) list.add('error', 'orphan_tool_use', `the tool_use on ${at(line)} has no tool_result on the live branch; the client drops the call`, line);
  for (const line of p.orphanResults) list.add('warning', 'orphan_tool_result', `the tool_result on ${at(line)} answers no earlier tool_use on the live branch; the client drops it`, line);
  for (const line of p.duplicateResults) list.add('error', 'duplicate_tool_result', `the tool_result on ${at(line)} answers a call that was already answered`, line);
}

/** Every finding for a scanned Claude transcript; another provider's file is judged before (verify.ts). */
export function transcriptFindings(scan: ScanRows, branch: LiveBranch, kind: SessionKind, pairing?: Pairing): Finding[] {
  const list = new FindingList();
  lineProblems(list, scan.problems, scan.recordCount);
  if (kind === 'subagent') list.add('error', 'sidechain_only', 'a sub-agent transcript (sidechain records only): the client refuses it as a session', null);
  if (kind === 'composite') list.add('error', 'composite_file', 'records from several client versions out of order: a collection of record shapes, not a session', null);
  let conversation = false;
  for (let i = 0; i < scan.table.length && !conversation; i += 1) conversation = scan.table.ok(i) && scan.table.message(i);
  if (!conversation) list.add('error', 'no_conversation', 'no user or assistant record: the client finds no conversation to resume', null);
  treeFindings(list, scan.table, branch, scan.problems);
  pairingFindings(list, pairing ?? livePairing(scan.table, branch));
  return list.finish();
}
