/**
 * Who a rollout is, from its head alone: whether the file is a Codex rollout at all, the thread id
 * and cwd from `session_meta`, and whether it is a session, a sub-agent thread or a composite.
 */
import type { SessionKind } from '../../../sdk/index.js';
import { FindingList } from './findings.js';
import { SessionIdentity } from './identity.js';
import { forEachLine, lineOpening } from './ends.js';
import { HISTORY_MODES, RecordType, isObject } from './records.js';
import { usageFacts } from './usage.js';

/** Lines examined when deciding whether a file is a Codex rollout (the original's sniff depth). */
const SNIFF_LINES = 24;
/**
 * Record types only a rollout's envelope carries. An ordinal or a session_meta alone would miss a
 * legacy rollout (no ordinals) whose first line was lost or broken: it is still a rollout, and the
 * commands should say what is wrong with it rather than that no provider knows it.
 */
const ENVELOPE_TYPES: ReadonlySet<unknown> = new Set(Object.values(RecordType));

/** Lines searched for session_meta records. */
const META_LINES = 64;

export interface HeadIdentity {
  isCodex: boolean;
  id: string | null;
  cwd: string | null;
  kind: SessionKind;
  paginated: boolean;
  /** Model of the first turn context in the head. */
  model: string | null;
}

const NOT_CODEX: HeadIdentity = { isCodex: false, id: null, cwd: null, kind: 'session', paginated: false, model: null };

function tryParse(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}

/**
 * A first line longer than the head window (huge base instructions) is matched by its opening:
 * the client writes the envelope type and the payload's id and cwd before the long fields.
 */
function fromPartialFirstLine(partial: string): HeadIdentity {
  const opening = partial.slice(0, 4096);
  if (!/"type"\s*:\s*"session_meta"/.test(opening) || !/"payload"\s*:\s*\{/.test(opening)) return NOT_CODEX;
  const str = (key: string) => {
    const m = new RegExp(`"${key}"\\s*:\\s*("(?:[^"\\\\]|\\\\.){0,4096}")`).exec(partial);
    if (!m) return null;
    const value = tryParse(m[1]!);
    return typeof value === 'string' && value.length > 0 ? value : null;
  };
  const historyMode = str('history_mode');
  const invalidMode = historyMode !== null && !HISTORY_MODES.has(historyMode);
  const subagent = /"subagent"\s*:/.test(partial);
  return {
    isCodex: true,
    id: str('id') ?? str('session_id'),
    cwd: str('cwd'),
    kind: invalidMode ? 'composite' : subagent ? 'subagent' : 'session',
    paginated: historyMode === 'paginated',
    model: null,
  };
}

export function identifyHead(head: Buffer, headIsPartialLine: boolean): HeadIdentity {
  if (headIsPartialLine) return fromPartialFirstLine(head.toString('utf8'));
  const identity = new SessionIdentity();
  const scratch = new FindingList();
  let isCodex = false;
  let notCodex = false;
  let model: string | null = null;
  let index = 0;
  forEachLine(head, (start, end) => {
    const i = index++;
    if (i >= META_LINES) return false;
    const sniffing = i < SNIFF_LINES && !isCodex;
    // Past the sniff, only session_meta lines and the first turn context matter; their openings say so.
    if (end === start) return;
    if (!sniffing) {
      const opening = lineOpening(head, start, end);
      if (!opening.includes('session_meta') && (model !== null || !opening.includes('"turn_context"'))) return;
    }
    const value = tryParse(head.toString('utf8', start, end));
    if (!isObject(value)) return;
    if (sniffing) {
      // Devin exports and Claude transcripts have their own markers; they are never Codex.
      if (Object.hasOwn(value, 'main_chain_id') || Object.hasOwn(value, 'sessionId')) {
        notCodex = true;
        return false;
      }
      if (isObject(value.payload) && (Object.hasOwn(value, 'ordinal') || ENVELOPE_TYPES.has(value.type))) isCodex = true;
    }
    if (value.type === RecordType.sessionMeta) identity.observe(i, value.payload, i === 0, scratch);
    if (model === null) model = usageFacts(value.type, value.payload)?.model ?? null;
    return;
  });
  if (!isCodex || notCodex) return NOT_CODEX;
  const first = identity.first;
  return { isCodex, id: first?.id ?? null, cwd: first?.cwd ?? null, kind: identity.kind(), paginated: identity.paginated, model };
}
