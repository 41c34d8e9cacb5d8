/**
 * Vault test helpers: a throwaway home, and small synthetic sessions in the shapes the vault meets
 * (Claude-style records with string content, Codex-style records with nested content and a
 * `compacted` replacement_history). The vault itself is format-blind; the shapes only make the
 * search, recall and type-count cases realistic.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeTempHome, type TempHome } from '../../helpers/temp-home.js';
import { vaultLayout, type VaultLayout } from '../../../kernel/vault/layout.js';
import { snapshotFile } from '../../../kernel/vault/snapshot.js';
import { renderStateCard } from '../../../sdk/state-card.js';
import type { DigestBlock } from '../../../schemas/generated/types.js';

export interface VaultHome extends TempHome {
  layout: VaultLayout;
  sessions: string;
}

export function makeVaultHome(): VaultHome {
  const home = makeTempHome('gob-vault-');
  const sessions = join(home.root, 'sessions');
  mkdirSync(sessions, { recursive: true });
  return { ...home, layout: vaultLayout(home.env), sessions };
}

export function jsonl(records: unknown[], trailingNewline = true): string {
  return records.map((r) => JSON.stringify(r)).join('\n') + (trailingNewline ? '\n' : '');
}

export function writeSession(dir: string, name: string, content: string | Buffer): string {
  const path = join(dir, name);
  writeFileSync(path, content, { mode: 0o600 });
  return path;
}

/** Writes `content` as a session file and archives it under `sessionId`; its index entry. */
export async function archiveSession(home: VaultHome, name: string, sessionId: string, provider: string, content: string, ts: number) {
  const path = writeSession(home.sessions, name, content);
  return (await snapshotFile(home.layout, { path, sessionId, provider, strategy: 'snapshot', ts, env: home.env })).entry;
}

export function claudeUser(sessionId: string, text: string, uuid: string) {
  return { type: 'user', sessionId, uuid, message: { role: 'user', content: text } };
}

export function claudeAssistant(sessionId: string, text: string, uuid: string) {
  return { type: 'assistant', sessionId, uuid, message: { role: 'assistant', content: [{ type: 'text', text }] } };
}

export function claudeToolResult(sessionId: string, toolUseId: string, output: string, uuid: string) {
  return { type: 'user', sessionId, uuid, message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUseId, content: output }] } };
}

export function codexCompacted(cardText: string, tail: string[]) {
  return {
    type: 'compacted',
    payload: {
      message: '',
      replacement_history: [
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: cardText }] },
        ...tail.map((text) => ({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text }] })),
      ],
    },
  };
}

export function codexStateCardMessage(cardText: string) {
  return { type: 'response_item', payload: { type: 'message', role: 'user', content: [{ type: 'input_text', text: cardText }] } };
}

export function card(overrides: Partial<DigestBlock>): string {
  return renderStateCard({ covers_items: 3, concepts: [], files_touched: [], decisions: [], errors: [], open_tasks: [], ...overrides });
}

/** A Claude-like session of `turns` user/assistant/tool triples, `outputBytes` of tool output each. */
export function claudeSession(sessionId: string, turns: number, outputBytes = 200): unknown[] {
  const records: unknown[] = [];
  for (let i = 0; i < turns; i++) {
    records.push(claudeUser(sessionId, `question ${i}: please look at src/file-${i}.ts`, `u${i}`));
    records.push(claudeAssistant(sessionId, `answer ${i}`, `a${i}`));
    records.push(claudeToolResult(sessionId, `toolu_${i}`, `output ${i} `.padEnd(outputBytes, 'x'), `t${i}`));
  }
  return records;
}
