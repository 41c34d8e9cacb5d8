/**
 * A separate process that archives one session (used by the concurrency and crash tests).
 * argv: <XDG_DATA_HOME> <path> <session_id> [repeat]
 */
import { vaultLayout } from '../../../kernel/vault/layout.js';
import { snapshotFile } from '../../../kernel/vault/snapshot.js';

const [dataHome, path, sessionId, repeat = '1'] = process.argv.slice(2);
const layout = vaultLayout({ XDG_DATA_HOME: dataHome! });
const shas: string[] = [];
for (let i = 0; i < Number(repeat); i++) {
  // Labels alternate so that every run appends a line: a repeat of the stream's newest is not one.
  const { entry } = await snapshotFile(layout, { path: path!, sessionId: sessionId!, provider: 'claude_code', strategy: i % 2 === 0 ? 'snapshot' : 'elide' });
  shas.push(entry.sha256);
}
process.stdout.write(JSON.stringify({ shas }) + '\n');
