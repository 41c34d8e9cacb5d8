/**
 * The live branch: the records the client rebuilds context from on resume (realclients.md §1.3–1.5).
 *
 * - Leaf: the `leafUuid` of the last last-prompt record, when it names a record that has no user or
 *   assistant record below it; otherwise the last leaf in file order (timestamps never matter).
 * - Path: the parentUuid walk from the leaf to a root. A `compact_boundary` has a null parent, so
 *   the walk ends there and everything before the compaction is off the branch.
 * - Parallel tool calls: every assistant record sharing a `message.id` with one on the path is part
 *   of the same response; a record made only of tool results whose parent is live joins too, unless
 *   its calls are already answered on the branch.
 */
import { CONVERSATION_TYPES } from './records.js';
import type { UuidLookup } from './uuid-index.js';
import { FLAG_COMPACT_BOUNDARY, FLAG_RESULT_ONLY, FLAG_SIDECHAIN, PARENT_UNKNOWN, type RecordTable } from './record-table.js';

export type LastPromptStatus = 'ok' | 'missing' | 'not_terminal' | 'invalid';

export interface LiveBranch {
  /** Line of the selected leaf; -1 when the file has no linked conversation record. */
  leafLine: number;
  leafSource: 'last_prompt' | 'file_order' | 'none';
  /** Per line: 1 when the linked record is on the live branch. */
  live: Uint8Array;
  /** Lines of the parent walk, leaf first. */
  path: number[];
  /** Top of the walk; -1 without a leaf. */
  rootLine: number;
  /** The record at the top of the walk names a parent that does not exist; -1 otherwise. */
  danglingLine: number;
  /** The walk met a record twice: the line where it closed; -1 otherwise. */
  pathCycleLine: number;
  /** Line of the compact_boundary the branch starts from; -1 when it does not start at one. */
  cutLine: number;
  /** The branch starts at a plain root although earlier conversation records exist: their first line. */
  droppedHistoryLine: number;
  /** One line in each parent cycle anywhere in the file. */
  cycleLines: number[];
  /** Later records reusing a uuid: the client keeps the later one. */
  duplicateUuids: Array<{ line: number; firstLine: number }>;
  /** Linked records whose parent exists only on a later line. */
  parentAfterChild: number[];
  /** Linked records off the branch whose parent does not exist. */
  danglingOffBranch: number[];
  /** The last last-prompt record that names a leaf, and whether its leaf was usable. */
  lastPrompt: { line: number; status: LastPromptStatus } | null;
  /** Every linked conversation record is a sidechain record (a sub-agent transcript). */
  sidechainOnly: boolean;
  /** The line of a record's parent: -1 for a root or an unlinked record, -2 for a missing parent. */
  parentOf: (line: number) => number;
}

export interface BranchOptions {
  /**
   * Whether the file has no main-chain conversation record. A tail window knows less than the file:
   * discovery passes what the head and tail together say.
   */
  sidechainOnly?: boolean;
  /** uuid -> line and the duplicates, when the reader already built them. */
  uuidLine?: UuidLookup;
  duplicateUuids?: Array<{ line: number; firstLine: number }>;
}

export function computeLiveBranch(t: RecordTable, options: BranchOptions = {}): LiveBranch {
  const n = t.length;
  let uuidLine: UuidLookup | undefined = options.uuidLine;
  let duplicateUuids = options.duplicateUuids;
  // The reader's parent lines are final when no uuid repeats: the map then never moves a uuid
  // to a later line. Otherwise (or without the reader's map) every parent is looked up.
  const readParents = uuidLine !== undefined && duplicateUuids !== undefined && duplicateUuids.length === 0;
  if (uuidLine === undefined || duplicateUuids === undefined) {
    const map = new Map<string, number>();
    duplicateUuids = [];
    for (let i = 0; i < n; i += 1) {
      if (!t.linked(i)) continue;
      const earlier = map.get(t.uuid[i]!);
      if (earlier !== undefined) duplicateUuids.push({ line: i, firstLine: earlier });
      map.set(t.uuid[i]!, i);
    }
    uuidLine = map;
  }
  /** -1: a root (or unlinked), -2: names a missing parent, else the parent's line. */
  const parents = new Int32Array(n);
  const parentAfterChild: number[] = [];
  const dangling: number[] = [];
  let anyMain = false;
  let anySide = false;
  for (let i = 0; i < n; i += 1) {
    if (!t.linked(i)) {
      parents[i] = -1;
      continue;
    }
    const parentUuid = t.parentUuid[i] ?? null;
    const read = readParents ? t.parentLine[i]! : PARENT_UNKNOWN;
    const p = parentUuid === null ? -1 : read >= 0 ? read : uuidLine.get(parentUuid) ?? -2;
    parents[i] = p;
    if (p === -2) dangling.push(i);
    else if (p > i) parentAfterChild.push(i);
    const type = t.type[i];
    if (type != null && CONVERSATION_TYPES.has(type)) {
      if (t.has(i, FLAG_SIDECHAIN)) anySide = true;
      else anyMain = true;
    }
  }
  const parentOf = (i: number): number => parents[i]!;

  const cycleLines: number[] = [];
  const visit = new Uint8Array(n);
  const stack: number[] = [];
  for (let i = 0; i < n; i += 1) {
    if (visit[i] !== 0 || !t.linked(i)) continue;
    stack.length = 0;
    let j = i;
    while (j >= 0 && visit[j] === 0) {
      visit[j] = 1;
      stack.push(j);
      j = parents[j]!;
    }
    if (j >= 0 && visit[j] === 1) cycleLines.push(j);
    for (const s of stack) visit[s] = 2;
  }

  const hasMessageBelow = new Uint8Array(n);
  for (let i = 0; i < n; i += 1) {
    if (!t.linked(i) || !t.message(i)) continue;
    let p = parents[i]!;
    while (p >= 0 && hasMessageBelow[p] === 0) {
      hasMessageBelow[p] = 1;
      p = parents[p]!;
    }
  }

  const sidechainOnly = options.sidechainOnly ?? (anySide && !anyMain);

  let lastPrompt: LiveBranch['lastPrompt'] = null;
  let leafLine = -1;
  let leafSource: LiveBranch['leafSource'] = 'none';
  let lastPromptLine = -1;
  for (const line of t.leafUuid.keys()) if (line > lastPromptLine) lastPromptLine = line;
  if (lastPromptLine >= 0) {
    const leafUuid = t.leafUuid.get(lastPromptLine)!;
    const target = leafUuid === '' ? undefined : uuidLine.get(leafUuid);
    let status: LastPromptStatus;
    if (leafUuid === '') status = 'invalid';
    else if (target === undefined) status = 'missing';
    else if (hasMessageBelow[target] === 1) status = 'not_terminal';
    else status = 'ok';
    lastPrompt = { line: lastPromptLine, status };
    if (status === 'ok') {
      leafLine = target!;
      leafSource = 'last_prompt';
    }
  }
  if (leafLine === -1) {
    for (let i = n - 1; i >= 0; i -= 1) {
      const type = t.type[i];
      if (!t.linked(i) || type == null || !CONVERSATION_TYPES.has(type)) continue;
      if (t.has(i, FLAG_SIDECHAIN) && !sidechainOnly) continue;
      if (hasMessageBelow[i] === 1 || uuidLine.get(t.uuid[i]!) !== i) continue;
      leafLine = i;
      leafSource = 'file_order';
      break;
    }
  }

  const live = new Uint8Array(n);
  const path: number[] = [];
  let rootLine = -1;
  let danglingLine = -1;
  let pathCycleLine = -1;
  if (leafLine >= 0) {
    let j = leafLine;
    for (;;) {
      if (live[j] === 1) {
        pathCycleLine = j;
        break;
      }
      live[j] = 1;
      path.push(j);
      rootLine = j;
      const p = parents[j]!;
      if (p === -1) break;
      if (p === -2) {
        danglingLine = j;
        break;
      }
      j = p;
    }
    addResponseSiblings(t, live, path, t.has(leafLine, FLAG_SIDECHAIN));
    addAnsweringResults(t, live, parents);
  }
  const rootIsBoundary = rootLine >= 0 && t.has(rootLine, FLAG_COMPACT_BOUNDARY);
  const cutLine = rootIsBoundary && danglingLine === -1 ? rootLine : -1;

  let droppedHistoryLine = -1;
  if (rootLine >= 0 && danglingLine === -1 && pathCycleLine === -1 && t.parentUuid[rootLine] === null && !rootIsBoundary) {
    const side = t.has(rootLine, FLAG_SIDECHAIN);
    for (let i = 0; i < rootLine; i += 1) {
      if (t.linked(i) && t.message(i) && t.has(i, FLAG_SIDECHAIN) === side) {
        droppedHistoryLine = i;
        break;
      }
    }
  }

  return {
    leafLine,
    leafSource,
    live,
    path,
    rootLine,
    danglingLine,
    pathCycleLine,
    cutLine,
    droppedHistoryLine,
    cycleLines,
    duplicateUuids,
    parentAfterChild,
    danglingOffBranch: dangling.filter((i) => i !== danglingLine),
    lastPrompt,
    sidechainOnly,
    parentOf,
  };
}

/** Records of one API response share `message.id`; the client rebuilds them as one message. */
function addResponseSiblings(t: RecordTable, live: Uint8Array, path: readonly number[], sidechain: boolean): void {
  let responses = 0;
  for (let i = 0; i < t.length; i += 1) if (t.response[i]! >= responses) responses = t.response[i]! + 1;
  if (responses === 0) return;
  const onPath = new Uint8Array(responses);
  for (const i of path) {
    const r = t.response[i]!;
    if (r >= 0) onPath[r] = 1;
  }
  for (let i = 0; i < t.length; i += 1) {
    const r = t.response[i]!;
    if (r >= 0 && onPath[r] === 1 && t.has(i, FLAG_SIDECHAIN) === sidechain && t.linked(i)) live[i] = 1;
  }
}

/** Tool results hanging under their own live tool_use record, off the main chain. */
function addAnsweringResults(t: RecordTable, live: Uint8Array, parents: Int32Array): void {
  const joins = (i: number): boolean => {
    if (live[i] === 1 || !t.has(i, FLAG_RESULT_ONLY) || !t.linked(i)) return false;
    const p = parents[i]!;
    return p >= 0 && live[p] === 1;
  };
  // Usually no record could join: then the live tool ids need not be gathered.
  let any = false;
  for (let i = 0; i < t.length && !any; i += 1) any = joins(i);
  if (!any) return;
  const calls = new Set<string>();
  const answered = new Set<string>();
  for (let i = 0; i < t.length; i += 1) {
    if (live[i] !== 1) continue;
    const uses = t.toolUseIds[i];
    if (uses) for (const id of uses) calls.add(id);
    const results = t.toolResultIds[i];
    if (results) for (const id of results) answered.add(id);
  }
  for (let i = 0; i < t.length; i += 1) {
    if (!joins(i)) continue;
    const ids = t.toolResultIds[i];
    if (!ids || !ids.every((id) => calls.has(id) && !answered.has(id))) continue;
    live[i] = 1;
    for (const id of ids) answered.add(id);
  }
}

/** Whether a record is live context: linked records by the branch, unlinked ones unless a compaction cut them off. */
export function isLive(branch: LiveBranch, t: RecordTable, i: number): boolean {
  if (!t.ok(i)) return false;
  if (branch.leafLine < 0) return true;
  if (t.uuid[i] !== null) return branch.live[i] === 1;
  return i > branch.cutLine;
}
