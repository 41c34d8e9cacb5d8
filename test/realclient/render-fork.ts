/**
 * A fork the way `apply` makes one: the provider plugin renders an elide + state-card plan over the
 * source into a private staging file under a new session id.
 */
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderCandidate } from '../../plugins/provider-claude-code/src/render.js';
import { render as renderRollout } from '../../plugins/provider-codex/src/render.js';
import type { Edit, RehearsalProvider, Transcript } from '../../schemas/generated/types.js';

/** The largest elidable live payloads, as an elide strategy would pick them. */
function elideTargets(transcript: Transcript, max: number): number[] {
  return transcript.items
    .filter((i) => i.est_tokens > 0 && (i.elidable_bytes ?? 0) > 0)
    .sort((a, b) => (b.elidable_bytes ?? 0) - (a.elidable_bytes ?? 0))
    .slice(0, max)
    .map((i) => i.line_index)
    .sort((a, b) => a - b);
}

export async function renderFork(provider: RehearsalProvider, source: Transcript, dir: string): Promise<{ path: string; sessionId: string; elided: number }> {
  const sessionId = randomUUID();
  const path = join(dir, `${sessionId}.jsonl`);
  writeFileSync(path, '', { mode: 0o600 });
  const targets = elideTargets(source, 48);
  const edits: Edit[] = [];
  if (targets.length > 0) edits.push({ op: 'elide', line_indexes: targets, stub_template: '[gobstopper elided {bytes} bytes]' });
  edits.push({ op: 'inject_digest', digest: { goal: 'Resume the work from the rehearsal check.', summary: 'Earlier tool output was elided; this card keeps the thread.', covers_items: targets.length } });
  const params = { provider_id: provider, path: source.session.path, source_sha256: source.source_sha256, edits, staging_path: path, new_session_id: sessionId, now: new Date().toISOString() };
  const result = provider === 'claude_code' ? await renderCandidate(params) : await renderRollout(params);
  return { path, sessionId, elided: result.elided_records ?? 0 };
}
