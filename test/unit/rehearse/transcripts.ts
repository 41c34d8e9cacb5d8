/**
 * Small synthetic sessions in the real on-disk shapes (a Claude Code project transcript, a Codex
 * rollout), with the prediction a provider would make for them.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RehearsalPrediction } from '../../../schemas/generated/types.js';

export interface SyntheticSession {
  path: string;
  sessionId: string;
  /** The API messages / input items a faithful client sends for it. */
  apiUnits: unknown[];
  predicted: RehearsalPrediction;
}

function predictionFor(apiUnits: unknown[], toolIds: string[]): RehearsalPrediction {
  const bytes = Buffer.byteLength(JSON.stringify(apiUnits));
  return { items: apiUnits.length, est_tokens: Math.ceil(bytes / 4), by_kind: {}, tool_calls: toolIds.length, tool_results: toolIds.length, messages: apiUnits.length, units: null };
}

/** A tool output long enough to be worth eliding. */
export const LISTING = Array.from({ length: 60 }, (_, i) => `-rw-r--r-- 1 u u ${1000 + i} big-${i}.bin`).join('\n');

export function writeClaudeSession(dir: string, sessionId: string): SyntheticSession {
  const messages = [
    { role: 'user', content: [{ type: 'text', text: 'Count the files in this folder, please.' }] },
    { role: 'assistant', content: [{ type: 'text', text: 'Listing them.' }, { type: 'tool_use', id: 'toolu_1', name: 'Bash', input: { command: 'ls | wc -l' } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '42' }] },
    { role: 'assistant', content: [{ type: 'text', text: 'There are 42 files.' }] },
    { role: 'user', content: [{ type: 'text', text: 'Thanks. Which is the largest?' }] },
    { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_2', name: 'Bash', input: { command: 'ls -S | head -1' } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_2', content: LISTING }] },
    { role: 'assistant', content: [{ type: 'text', text: 'big.bin is the largest.' }] },
  ];
  let parent: string | null = null;
  const lines = messages.map((message, i) => {
    const uuid = `00000000-0000-4000-8000-${String(i + 1).padStart(12, '0')}`;
    const record = { type: message.role, uuid, parentUuid: parent, sessionId, cwd: '/home/u/proj', timestamp: `2026-01-01T00:00:${String(i).padStart(2, '0')}Z`, message };
    parent = uuid;
    return JSON.stringify(record);
  });
  const path = join(dir, `${sessionId}.jsonl`);
  writeFileSync(path, lines.join('\n') + '\n');
  return { path, sessionId, apiUnits: messages, predicted: predictionFor(messages, ['toolu_1', 'toolu_2']) };
}

export function writeCodexRollout(dir: string, sessionId: string): SyntheticSession {
  const items = [
    { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Run the tests.' }] },
    { type: 'function_call', name: 'exec_command', arguments: '{"cmd":"npm test"}', call_id: 'call_1' },
    { type: 'function_call_output', call_id: 'call_1', output: '3 passed' },
    { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'All 3 tests pass.' }] },
  ];
  const meta = { timestamp: '2026-01-02T03:04:05.000Z', type: 'session_meta', payload: { id: sessionId, timestamp: '2026-01-02T03:04:05.000Z', cwd: '/home/u/proj', originator: 'codex_cli_rs', cli_version: '0.171.0', model_provider: 'openai' } };
  const lines = [meta, ...items.map((payload, i) => ({ timestamp: `2026-01-02T03:04:0${6 + i}.000Z`, type: 'response_item', payload }))].map((r) => JSON.stringify(r));
  const path = join(dir, `rollout-2026-01-02T03-04-05-${sessionId}.jsonl`);
  writeFileSync(path, lines.join('\n') + '\n');
  return { path, sessionId, apiUnits: items, predicted: predictionFor(items, ['call_1']) };
}
