/**
 * The prediction the real-client tier compares against: the provider plugin's own parse, as
 * `predictionFromItems` reads it (live items, their est_tokens, their tool ids), plus the one thing
 * a normalized transcript cannot say: how many API messages the client groups the live records into.
 * That count is derived here from the live records themselves, the way the client groups them.
 */
import { readFileSync } from 'node:fs';
import { parseTranscript } from '../../plugins/provider-claude-code/src/parse.js';
import { parse as parseRollout } from '../../plugins/provider-codex/src/parse.js';
import { predictionFromItems } from '../../kernel/rehearse/index.js';
import type { RehearsalPrediction, RehearsalProvider, Transcript } from '../../schemas/generated/types.js';

export interface ClientPrediction {
  sessionId: string;
  predicted: RehearsalPrediction;
  transcript: Transcript;
}

type Json = Record<string, unknown>;

function recordsAt(path: string, transcript: Transcript): { line: number; record: Json }[] {
  const lines = readFileSync(path, 'utf8').split('\n');
  return transcript.items
    .filter((item) => item.est_tokens > 0)
    .map((item) => ({ line: item.line_index, record: JSON.parse(lines[item.line_index]!) as Json }));
}

/**
 * Claude Code sends one assistant message per API response (records sharing `message.id`, wherever
 * the parallel-call layout put them), merges consecutive user-side records (prompts, tool results,
 * local command output) into one user message, and drops whitespace-only text blocks.
 */
function claudeMessages(live: { record: Json }[]): Json[] {
  const messages: { role: string; content: Json[] }[] = [];
  const byResponseId = new Map<string, number>();
  for (const { record } of live) {
    const message = (record.message ?? {}) as Json;
    const raw = message.content ?? record.content;
    const blocks = (typeof raw === 'string' ? [{ type: 'text', text: raw }] : Array.isArray(raw) ? (raw as Json[]) : []).filter(
      (b) => !(b.type === 'text' && typeof b.text === 'string' && b.text.trim() === ''),
    );
    if (blocks.length === 0) continue;
    const role = record.type === 'assistant' ? 'assistant' : 'user';
    const responseId = typeof message.id === 'string' ? message.id : null;
    if (role === 'assistant' && responseId !== null && byResponseId.has(responseId)) {
      messages[byResponseId.get(responseId)!]!.content.push(...blocks);
      continue;
    }
    const last = messages.at(-1);
    if (role === 'user' && last?.role === 'user') {
      last.content.push(...blocks);
      continue;
    }
    messages.push({ role, content: blocks });
    if (role === 'assistant' && responseId !== null) byResponseId.set(responseId, messages.length - 1);
  }
  return messages;
}

/** Codex sends each live response item as one input item, and a compaction as its replacement history. */
function codexItemCount(live: { record: Json }[]): number {
  let n = 0;
  for (const { record } of live) {
    const payload = (record.payload ?? {}) as Json;
    n += record.type === 'compacted' ? ((payload.replacement_history as Json[] | undefined) ?? []).length : 1;
  }
  return n;
}

export async function predictClientContext(provider: RehearsalProvider, path: string): Promise<ClientPrediction> {
  const transcript = provider === 'claude_code' ? await parseTranscript({ provider_id: 'claude_code', path }) : await parseRollout({ provider_id: 'codex', path });
  const live = recordsAt(path, transcript);
  const messages = provider === 'claude_code' ? claudeMessages(live).length : codexItemCount(live);
  return { sessionId: transcript.session.session_id, predicted: predictionFromItems(transcript.items, { messages }), transcript };
}

/** The same prediction with one more user turn appended (a state card), for forks that add one. */
export function withAppendedUserTurn(prediction: RehearsalPrediction, cardBytes: number): RehearsalPrediction {
  return {
    ...prediction,
    items: prediction.items + 1,
    messages: prediction.messages === null ? null : prediction.messages + 1,
    est_tokens: prediction.est_tokens + Math.ceil(cardBytes / 4),
  };
}
