/**
 * What a render is asked to do, read and checked before any byte is read: which lines to elide with
 * which stub, the state card, the fork's session id and the time to stamp appended records with.
 */
import type { DigestBlock, ElideEdit, ProviderRenderParams } from '../../../schemas/generated/types.js';
import { invalidInput } from '../../../sdk/serve.js';
import { digestTextBytes, MAX_DIGEST_BYTES } from '../../../sdk/state-card.js';
import { requireFileId } from './session-id.js';

export interface ElideTarget {
  template: string;
  /** A complete stub for this line, used instead of the template. */
  stub: string | null;
}

export interface RenderPlan {
  elide: Map<number, ElideTarget>;
  digest: DigestBlock | null;
  newSessionId: string | null;
  now: string;
}

function oneLine(text: string, what: string): string {
  if (/[\r\n]/.test(text)) throw invalidInput(`${what} must be one line`);
  return text;
}

function addElide(elide: Map<number, ElideTarget>, edit: ElideEdit): void {
  const template = oneLine(edit.stub_template, 'stub_template');
  for (const line of edit.line_indexes) {
    if (elide.has(line)) continue;
    const stub = edit.per_item_stubs?.[String(line)];
    elide.set(line, { template, stub: stub === undefined ? null : oneLine(stub, 'a per-item stub') });
  }
}

export function readPlan(params: ProviderRenderParams): RenderPlan {
  const elide = new Map<number, ElideTarget>();
  let digest: DigestBlock | null = null;
  for (const edit of params.edits) {
    if (edit.op === 'elide') addElide(elide, edit);
    else if (edit.op === 'inject_digest') {
      if (digest !== null) throw invalidInput('a plan may inject one state card');
      if (digestTextBytes(edit.digest) > MAX_DIGEST_BYTES) throw invalidInput(`the state card is over ${MAX_DIGEST_BYTES} bytes of text`);
      digest = edit.digest;
    }
    // provider_compact and cache_edit ask the client or the API layer; the file carries nothing.
  }
  const stamp = Date.parse(params.now);
  if (Number.isNaN(stamp)) throw invalidInput('now must be an ISO-8601 time');
  const newSessionId = params.new_session_id ? requireFileId(params.new_session_id, 'new_session_id') : null;
  return { elide, digest, newSessionId, now: new Date(stamp).toISOString() };
}
