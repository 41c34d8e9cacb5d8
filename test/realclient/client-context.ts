/**
 * The prediction the real-client tier compares against: the provider plugin's own parse decides
 * which records are live (items with est_tokens > 0) and which tool ids they carry; this file turns
 * those records into what the client should send, measured the way the rebuilt context is measured.
 *
 * Why not the plugins' est_tokens: they estimate ceil(bytes/4) of each whole JSONL line (envelope,
 * uuids, usage, Claude's `toolUseResult` UI copy), which the client never sends. The tier logs that
 * ratio for every fixture; the comparison uses the bytes the client is expected to send.
 */
import { readFileSync } from 'node:fs';
import { parseTranscript } from '../../plugins/provider-claude-code/src/parse.js';
import { parse as parseRollout } from '../../plugins/provider-codex/src/parse.js';
import { predictionFromItems } from '../../kernel/rehearse/index.js';
import type { RehearsalPrediction, RehearsalProvider, Transcript } from '../../schemas/generated/types.js';

export interface ClientPrediction {
  sessionId: string;
  predicted: RehearsalPrediction;
  /** Sum of the plugin's own est_tokens over live items, for the log. */
  pluginEstTokens: number;
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

/** Client bookkeeping a paginated rollout records on items; the rebuilt measure leaves it out too. */
function withoutBookkeeping(item: Json): Json {
  const { internal_chat_message_metadata_passthrough: _bookkeeping, ...rest } = item;
  return rest;
}

/** Codex sends each live response item as one input item, and a compaction as its replacement history. */
function codexItems(live: { record: Json }[]): Json[] {
  const items: Json[] = [];
  for (const { record } of live) {
    const payload = (record.payload ?? {}) as Json;
    if (record.type === 'compacted') items.push(...((payload.replacement_history as Json[] | undefined) ?? []).map(withoutBookkeeping));
    else items.push(withoutBookkeeping(payload));
  }
  return items;
}

export async function predictClientContext(provider: RehearsalProvider, path: string): Promise<ClientPrediction> {
  const transcript = provider === 'claude_code' ? await parseTranscript({ provider_id: 'claude_code', path }) : await parseRollout({ provider_id: 'codex', path });
  const live = recordsAt(path, transcript);
  const units = provider === 'claude_code' ? claudeMessages(live) : codexItems(live);
  const base = predictionFromItems(transcript.items, { messages: units.length });
  const bytes = units.length > 0 ? Buffer.byteLength(JSON.stringify(units)) : 0;
  return {
    sessionId: transcript.session.session_id,
    predicted: { ...base, est_tokens: Math.ceil(bytes / 4) },
    pluginEstTokens: base.est_tokens,
    transcript,
  };
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
