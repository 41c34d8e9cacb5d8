/**
 * Stand-ins for the real `claude` and `codex` executables: small Node scripts that find the copy the
 * rehearsal placed in their throwaway home, replay it to the stub as the real client would (Anthropic
 * messages / Responses input items plus the probe prompt), and print what the real client prints.
 * Each mode reproduces one behaviour the rehearsal must judge.
 */
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export type FakeMode =
  | 'ok'
  /** Sends only the last two messages: a client that silently dropped earlier history. */
  | 'drop-history'
  /** Exits 1 with no output and no request. */
  | 'silent-exit-1'
  /** Says the session does not exist, as Claude does for a file in the wrong project folder. */
  | 'no-conversation'
  /** Resumes and reports a different session id. */
  | 'wrong-session'
  /** Starts a helper process, records its pid, and never exits. */
  | 'hang'
  /** Writes its environment and argv next to the given file, then behaves as 'ok'. */
  | 'dump-env';

const COMMON = String.raw`
const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');
const args = process.argv.slice(2);
const probe = args[args.length - 1];
function findFile(dir, test) {
  if (!fs.existsSync(dir)) return null;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) { const hit = findFile(full, test); if (hit) return hit; }
    else if (test(entry.name)) return full;
  }
  return null;
}
function records(file) {
  return fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
}
async function post(url, headers, body) {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  await res.text();
  return res.status;
}
function hang() {
  const helper = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  fs.writeFileSync(MARK_FILE, String(helper.pid));
  setInterval(() => {}, 1000);
}
`;

const CLAUDE_BODY = String.raw`
const id = args[args.indexOf('--resume') + 1];
const file = findFile(path.join(process.env.CLAUDE_CONFIG_DIR, 'projects'), (n) => n === id + '.jsonl');
async function main() {
  if (MODE === 'dump-env') fs.writeFileSync(MARK_FILE, JSON.stringify({ env: process.env, args, cwd: process.cwd() }));
  if (MODE === 'hang') return hang();
  if (MODE === 'silent-exit-1') process.exit(1);
  if (MODE === 'no-conversation' || !file) { process.stderr.write('No conversation found with session ID: ' + id + '\n'); process.exit(1); }
  let messages = records(file).filter((r) => r.message && (r.type === 'user' || r.type === 'assistant')).map((r) => ({ role: r.message.role, content: r.message.content }));
  if (MODE === 'drop-history') messages = messages.slice(-2);
  messages.push({ role: 'user', content: [{ type: 'text', text: probe }] });
  const session = MODE === 'wrong-session' ? '00000000-0000-4000-8000-000000000000' : id;
  await fetch(process.env.ANTHROPIC_BASE_URL + '/', { method: 'HEAD' });
  await post(process.env.ANTHROPIC_BASE_URL + '/v1/messages?beta=true', { 'x-api-key': process.env.ANTHROPIC_API_KEY, 'x-claude-code-session-id': session }, { model: 'fake', stream: true, system: 'sys', messages });
  process.stdout.write(JSON.stringify({ type: 'result', subtype: 'success', is_error: false, session_id: session }) + '\n');
}
main().catch((e) => { process.stderr.write(String(e) + '\n'); process.exit(2); });
`;

const CODEX_BODY = String.raw`
const id = args[args.indexOf('resume') + 1];
const override = args.find((a) => a.includes('base_url=')) || '';
const base = override.slice(override.indexOf('"') + 1, override.lastIndexOf('"'));
const file = findFile(path.join(process.env.CODEX_HOME, 'sessions'), (n) => n.startsWith('rollout-') && n.endsWith('-' + id + '.jsonl'));
async function main() {
  if (MODE === 'dump-env') fs.writeFileSync(MARK_FILE, JSON.stringify({ env: process.env, args, cwd: process.cwd() }));
  if (MODE === 'hang') return hang();
  if (MODE === 'silent-exit-1') process.exit(1);
  if (MODE === 'no-conversation' || !file) { process.stderr.write('Error: no rollout found for thread id ' + id + '\n'); process.exit(1); }
  const session = MODE === 'wrong-session' ? '00000000-0000-4000-8000-000000000000' : id;
  process.stdout.write(JSON.stringify({ type: 'thread.started', thread_id: session }) + '\n');
  let input = records(file).filter((r) => r.type === 'response_item').map((r) => r.payload);
  if (MODE === 'drop-history') input = input.slice(-2);
  input.unshift({ type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'base instructions' }] });
  input.push({ type: 'message', role: 'user', content: [{ type: 'input_text', text: probe }] });
  await post(base + '/responses', { 'session-id': session, authorization: 'Bearer ' + process.env.OPENAI_API_KEY }, { model: 'fake', stream: true, input });
  process.stdout.write(JSON.stringify({ type: 'turn.completed' }) + '\n');
}
main().catch((e) => { process.stderr.write(String(e) + '\n'); process.exit(2); });
`;

/** Writes an executable fake client; `markFile` receives the hang helper's pid or the env dump. */
export function writeFakeClient(dir: string, client: 'claude' | 'codex', mode: FakeMode, markFile = join(dir, `${client}-${mode}.mark`)): string {
  const path = join(dir, `fake-${client}-${mode}`);
  const header = `#!/usr/bin/env node\n'use strict';\nconst MODE = ${JSON.stringify(mode)};\nconst MARK_FILE = ${JSON.stringify(markFile)};\n`;
  writeFileSync(path, header + COMMON + (client === 'claude' ? CLAUDE_BODY : CODEX_BODY));
  chmodSync(path, 0o755);
  return path;
}
