import type { RehearsalProvider } from '../../../schemas/generated/types.js';
import type { RecordedRequest } from '../stub-server/recorded-request.js';

export const MAX_ERROR_TEXT = 600;

function oneLine(text: string): string {
  const flat = text.replace(/\u001b\[[0-9;]*m/g, '').replace(/\s+/g, ' ').trim();
  return flat.length > MAX_ERROR_TEXT ? flat.slice(0, MAX_ERROR_TEXT - 1) + '…' : flat;
}

function jsonObjects(text: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const line of text.split('\n')) {
    const trimmed = line.trim();
    if (!trimmed.startsWith('{')) continue;
    try {
      const value = JSON.parse(trimmed) as unknown;
      if (value && typeof value === 'object' && !Array.isArray(value)) out.push(value as Record<string, unknown>);
    } catch {
      // Not an event line.
    }
  }
  return out;
}

function stderrError(stderr: string): string | null {
  const lines = stderr.split('\n').map((l) => l.trim()).filter((l) => l.length > 0);
  const flagged = lines.filter((l) => /error|fatal|panic|failed|not found|refus/i.test(l));
  const chosen = flagged.length > 0 ? flagged.slice(-3) : lines.slice(-3);
  return chosen.length > 0 ? oneLine(chosen.join(' | ')) : null;
}

/**
 * What the client itself said went wrong, one bounded line: Claude's JSON result (`is_error`,
 * `errors`), Codex's `error` / `turn.failed` events, else the last error-looking stderr lines.
 * null when the client reported nothing wrong.
 */
export function clientErrorText(provider: RehearsalProvider, stdout: string, stderr: string, failed: boolean): string | null {
  const events = jsonObjects(stdout);
  if (provider === 'claude_code') {
    const result = events.find((e) => e.type === 'result');
    if (result && (result.is_error === true || (typeof result.subtype === 'string' && result.subtype.startsWith('error')))) {
      const errors = Array.isArray(result.errors) ? result.errors.filter((e): e is string => typeof e === 'string') : [];
      const text = errors.length > 0 ? errors.join('; ') : typeof result.result === 'string' ? result.result : String(result.subtype ?? 'error');
      return oneLine(text);
    }
  } else {
    const messages: string[] = [];
    for (const e of events) {
      if (e.type === 'error' && typeof e.message === 'string') messages.push(e.message);
      if (e.type === 'turn.failed' && e.error && typeof (e.error as { message?: unknown }).message === 'string') messages.push((e.error as { message: string }).message);
    }
    if (messages.length > 0) return oneLine(messages.join('; '));
  }
  return failed ? stderrError(stderr) : null;
}

/** Whether the client's own output says the run failed even though it exited 0. */
export function clientReportedFailure(provider: RehearsalProvider, stdout: string): boolean {
  const events = jsonObjects(stdout);
  if (provider === 'claude_code') return events.some((e) => e.type === 'result' && e.is_error === true);
  return events.some((e) => e.type === 'turn.failed' || e.type === 'error');
}

function parseJsonString(text: string): Record<string, unknown> | null {
  try {
    const value = JSON.parse(text) as unknown;
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/**
 * The session the client actually resumed: from the model request (Claude's
 * `x-claude-code-session-id` header or `metadata.user_id.session_id`; Codex's `session-id` /
 * `thread-id` headers or `prompt_cache_key`), else from its own output.
 */
export function resumedSessionId(provider: RehearsalProvider, request: RecordedRequest | null, stdout: string): string | null {
  if (request) {
    const headers = request.headers;
    const body = request.body && typeof request.body === 'object' ? (request.body as Record<string, unknown>) : {};
    if (provider === 'claude_code') {
      if (headers['x-claude-code-session-id']) return headers['x-claude-code-session-id'];
      const metadata = body.metadata as { user_id?: unknown } | undefined;
      const user = typeof metadata?.user_id === 'string' ? parseJsonString(metadata.user_id) : null;
      if (user && typeof user.session_id === 'string') return user.session_id;
    } else {
      const fromHeader = headers['session-id'] ?? headers['thread-id'];
      if (fromHeader) return fromHeader;
      if (typeof body.prompt_cache_key === 'string') return body.prompt_cache_key;
    }
  }
  for (const event of jsonObjects(stdout)) {
    if (provider === 'claude_code' && typeof event.session_id === 'string') return event.session_id;
    if (provider === 'codex' && event.type === 'thread.started' && typeof event.thread_id === 'string') return event.thread_id;
  }
  return null;
}
