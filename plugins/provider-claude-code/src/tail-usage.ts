/**
 * The context a session reports, from its tail alone, parsing only the records on the way: the
 * leaf (the last last-prompt's leaf, else the last main-chain record), then the parent walk up to
 * the first assistant usage report, then that response's later records (the last one carries the
 * final output count). The same rules as the full read (branch.ts), applied lazily.
 */
import type { UsageSample } from '../../../schemas/generated/types.js';
import { CONVERSATION_TYPES, isCompactBoundary, isObject, LAST_PROMPT, type RawRecord } from './records.js';
import { modelContextWindow, SYNTHETIC_MODEL } from './models.js';
import type { TailWindow } from './tail-window.js';
import { readUsage } from './usage-reading.js';
import { usageCounters } from './usage-counters.js';
import type { EnvelopeTracker } from './envelope.js';

/** Parent steps the walk takes before giving up (a chain this long in one tail is not a tail). */
const MAX_STEPS = 100_000;
const LAST_PROMPT_BYTES = Buffer.from('"last-prompt"');

export interface TailUsage {
  usage: UsageSample;
  /** The walk left the window, or found no main-chain record in it: a bigger window may answer. */
  needsMore: boolean;
  /** Only sidechain conversation records were met. */
  sidechainOnly: boolean;
}

function messageOf(r: RawRecord): RawRecord | null {
  return isObject(r.message) ? r.message : null;
}

/** The usage an assistant record reports, unless it has none or is the client's own zero. */
function report(r: RawRecord): ReturnType<typeof readUsage> {
  if (r.type !== 'assistant') return null;
  const m = messageOf(r);
  if (!m || m.model === SYNTHETIC_MODEL) return null;
  const u = readUsage(m.usage);
  if (u === null || (u.reason === null && u.context === 0)) return null;
  return u;
}

class Walker {
  constructor(
    readonly win: TailWindow,
    readonly envelope: EnvelopeTracker,
  ) {}

  record(k: number): RawRecord | null {
    const r = this.win.record(k);
    if (r) this.envelope.see(r);
    return r;
  }

  /** The newest line before `before` holding the record with this uuid, or -1. */
  find(uuid: string, before = this.win.length): number {
    for (const k of this.win.linesContaining(Buffer.from(uuid), before)) {
      if (this.record(k)?.uuid === uuid) return k;
    }
    return -1;
  }

  /** No user or assistant record after line `k` names it as parent. */
  terminal(k: number, uuid: string): boolean {
    for (const j of this.win.linesContainingAfter(Buffer.from(uuid), k)) {
      const r = this.record(j);
      if (r && (r.type === 'user' || r.type === 'assistant') && r.parentUuid === uuid) return false;
    }
    return true;
  }

  /**
   * The leaf line and whether only sidechain records were seen on the way. `outside` says the last
   * last-prompt names a record this window does not hold: a wider window may find it.
   */
  leaf(): { line: number; sidechainOnly: boolean; outside: boolean } {
    let outside = false;
    for (const k of this.win.linesContaining(LAST_PROMPT_BYTES)) {
      const r = this.record(k);
      if (!r || r.type !== LAST_PROMPT) continue;
      if (typeof r.leafUuid === 'string' && r.leafUuid.length > 0) {
        const line = this.find(r.leafUuid);
        if (line >= 0 && this.terminal(line, r.leafUuid)) return { line, sidechainOnly: false, outside: false };
        outside = line < 0;
      }
      break;
    }
    let sidechain = -1;
    for (let k = this.win.length - 1; k >= 0; k -= 1) {
      const r = this.record(k);
      if (!r || typeof r.uuid !== 'string' || typeof r.type !== 'string' || !CONVERSATION_TYPES.has(r.type)) continue;
      if (r.isSidechain !== true) return { line: k, sidechainOnly: false, outside };
      if (sidechain < 0) sidechain = k;
    }
    return { line: sidechain, sidechainOnly: sidechain >= 0, outside };
  }
}

export function tailUsage(win: TailWindow, envelope: EnvelopeTracker, wholeFile: boolean): TailUsage {
  const walk = new Walker(win, envelope);
  const counters = usageCounters(win.buf);
  const sample: UsageSample = {
    context_tokens: 0,
    lifetime_input_tokens: counters.input,
    lifetime_cached_tokens: Math.min(counters.cached, counters.input),
    model_context_window: null,
    model: null,
    context_state: 'absent',
    lifetime_scope: counters.responses === 0 ? 'absent' : wholeFile ? 'full' : 'partial',
    context_components: null,
    context_reason: null,
  };
  const leaf = walk.leaf();
  let found = -1;
  let reset = false;
  let leftWindow = leaf.line < 0;
  let reachedRoot = false;
  for (let k = leaf.line, steps = 0; k >= 0 && steps < MAX_STEPS; steps += 1) {
    const r = walk.record(k)!;
    if (report(r)) {
      found = k;
      break;
    }
    if (isCompactBoundary(r)) {
      reset = true;
      break;
    }
    if (typeof r.parentUuid !== 'string') {
      reachedRoot = true;
      break;
    }
    const parent = walk.find(r.parentUuid, k);
    if (parent < 0) {
      leftWindow = true;
      break;
    }
    k = parent;
  }
  if (found >= 0) {
    // The response's later records repeat its usage with the final output count.
    const id = messageOf(walk.record(found)!)!.id;
    if (typeof id === 'string') {
      for (const j of win.linesContainingAfter(Buffer.from(id), found)) {
        const r = walk.record(j);
        if (r && r.type === 'assistant' && messageOf(r)?.id === id && report(r)) found = j;
      }
    }
  } else if (leftWindow && !wholeFile) {
    // Nothing on the branch inside the window: the newest main-chain report is the best answer.
    for (const k of win.linesContaining(Buffer.from('"usage"'))) {
      const r = walk.record(k);
      if (r && r.isSidechain !== true && report(r)) {
        found = k;
        break;
      }
    }
  }
  if (found >= 0) {
    const m = messageOf(walk.record(found)!)!;
    const u = report(walk.record(found)!)!;
    sample.model = typeof m.model === 'string' ? m.model : null;
    sample.model_context_window = modelContextWindow(sample.model);
    if (u.reason === null) {
      sample.context_tokens = u.context;
      sample.context_state = 'reported';
    } else {
      sample.context_state = 'unknown';
      sample.context_reason = u.reason;
      sample.context_components = u.components;
    }
  } else if (reset) sample.context_state = 'reset';
  else if (!wholeFile) {
    sample.context_state = 'unknown';
    sample.context_reason = 'read_limit';
  }
  const needsMore = !wholeFile && (leaf.outside || (!reset && (leftWindow || (found < 0 && !reachedRoot))));
  return { usage: sample, needsMore, sidechainOnly: leaf.sidechainOnly };
}
