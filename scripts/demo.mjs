#!/usr/bin/env node
// The main job on the bundled demo sessions, in a throwaway home: detect, plan, apply, a watch pass,
// verify the fork, history, search and read back a detail the fork elided, recall, undo, the events log.
// Never touches the real homes.
// `--keep` leaves the temporary home in place for a look around.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = join(root, 'bin', 'run.js');
const keep = process.argv.includes('--keep');
// The failed migration's error line, which the state card keeps, and a detail only its elided
// output held, which the vault finds.
const PLANTED = 'ECONNREFUSED 127.0.0.1:5433';
const DETAIL = 'at Migrator.run (src/db/migrate.ts:88:13)';
const CLAUDE_ID = '7d3f1c2a-8b4e-4f6a-9c1d-2e5b7a9c0d11';
const CODEX_ID = '019d2e4a-7c1b-7f30-9a52-3b8c6d1e0f77';

const home = mkdtempSync(join(tmpdir(), 'gobstopper-demo-'));
const env = {
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: home,
  CLAUDE_CONFIG_DIR: join(home, '.claude'),
  CODEX_HOME: join(home, '.codex'),
  XDG_DATA_HOME: join(home, '.local', 'share'),
  XDG_CONFIG_HOME: join(home, '.config'),
  XDG_STATE_HOME: join(home, '.local', 'state'),
  XDG_CACHE_HOME: join(home, '.cache'),
};

const bold = (s) => (process.stdout.isTTY ? `\u001b[1m${s}\u001b[0m` : s);
function step(title, explanation) {
  console.log(`\n${bold(`== ${title}`)}`);
  if (explanation) console.log(explanation);
}
function run(args, { json = false, show = true } = {}) {
  if (show) console.log(`$ gobstopper ${args.join(' ')}`);
  const out = execFileSync(process.execPath, [bin, ...args, ...(json ? ['--json'] : [])], { env, encoding: 'utf8', cwd: home });
  if (show) process.stdout.write(out.endsWith('\n') ? out : `${out}\n`);
  return json ? JSON.parse(out) : out;
}
function files(dir) {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => join(d.parentPath ?? d.path, d.name));
}
const sha = (path) => createHash('sha256').update(readFileSync(path)).digest('hex');
const shellQuote = (s) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

function layOut() {
  const hourAgo = new Date(Date.now() - 3600_000);
  cpSync(join(root, 'examples', 'sessions', 'claude'), join(env.CLAUDE_CONFIG_DIR, 'projects'), { recursive: true });
  cpSync(join(root, 'examples', 'sessions', 'codex'), join(env.CODEX_HOME, 'sessions'), { recursive: true });
  // Idle sessions: a session updated within 180 s is live and gobstopper leaves it to its client.
  for (const f of [...files(env.CLAUDE_CONFIG_DIR), ...files(env.CODEX_HOME)]) utimesSync(f, hourAgo, hourAgo);
  mkdirSync(join(env.XDG_CONFIG_HOME, 'gobstopper'), { recursive: true });
  writeFileSync(
    join(env.XDG_CONFIG_HOME, 'gobstopper', 'config.toml'),
    '# Demo policy: small sessions, so a low trigger.\n[policy]\nstrategy = "compacted"\ntrigger_tokens = 20000\nfloor_tokens = 8000\n',
  );
}

try {
  layOut();
  const sources = [...files(env.CLAUDE_CONFIG_DIR), ...files(env.CODEX_HOME)].map((f) => [f, sha(f)]);
  console.log(`Demo home: ${home} (a throwaway HOME, removed at the end unless --keep; your real sessions are never read)`);
  console.log('Policy: ~/.config/gobstopper/config.toml sets strategy "compacted", trigger 20,000 tokens, floor 8,000.');

  step('1. Find the sessions', 'Context sizes come from the tails of the transcripts, as each client reported them.');
  run(['detect']);

  step('2. Preview the compaction', 'Nothing is written: the plan shows which records would be replaced by stubs and the state card.');
  run(['plan', CLAUDE_ID.slice(0, 8)]);

  step('3. Apply it', 'Snapshot the exact source bytes into the vault, render a compacted copy, verify it, publish it as a new session.');
  run(['apply', CLAUDE_ID.slice(0, 8)]);
  // The same apply again returns the same fork and writes nothing: the demo reads its receipt that way.
  const r = run(['apply', CLAUDE_ID.slice(0, 8)], { json: true, show: false }).receipt;

  step('4. Or let a watch do it', 'One pass of gobstopper watch applies every idle session that crossed its trigger: the Codex one now; the Claude one it finds already compacted.');
  run(['watch', '--once']);

  step('5. Verify the fork', 'The client must be able to resume it: tool calls paired, links intact.');
  run(['verify', r.output_session_id]);
  const forkText = readFileSync(r.path, 'utf8');
  console.log(
    forkText.includes(DETAIL)
      ? `The fork still holds "${DETAIL}".`
      : `The migration's output is gone from the fork; its state card keeps the error line ("${PLANTED}…"), and the vault keeps the rest, such as "${DETAIL}".`,
  );

  step('6. History of the session', 'Every archived state, newest first.');
  run(['history', CLAUDE_ID.slice(0, 8)]);

  step('7. Find the elided detail in the vault', 'search-snapshot returns record numbers and hashes, never content.');
  const found = run(['search-snapshot', r.snapshot_manifest_sha256, '--query', DETAIL], { json: true, show: false });
  console.log(`$ gobstopper search-snapshot ${r.snapshot_manifest_sha256} --query '${DETAIL}' --json`);
  console.log('(its JSON, summed up:)');
  for (const m of found.matches) console.log(`record ${m.record_index}: ${m.match_count} match(es), sha256 ${m.record_sha256.slice(0, 16)}…`);
  const record = found.matches[0].record_index;

  step('8. Read that record back', 'One bounded UTF-8 page of the archived record, bound to the snapshot and record hashes.');
  const page = run(['read-snapshot', r.snapshot_manifest_sha256, '--record', String(record), '--max-bytes', '16384'], { json: true, show: false });
  console.log(`$ gobstopper read-snapshot ${r.snapshot_manifest_sha256} --record ${record} --max-bytes 16384 --json`);
  console.log('(the part of its content around that detail:)');
  const at = page.content.indexOf(PLANTED);
  console.log(`…${page.content.slice(Math.max(0, at - 40), page.content.indexOf(DETAIL, at) + DETAIL.length)}…`);
  console.log(`(${page.record_bytes} bytes in the record; content_trust: ${page.content_trust})`);

  step('9. Recall state cards', "Search every state card in the vault, the fork's included.");
  run(['recall', '--query', 'export']);

  step('10. Undo', 'Name the fork to get back the state it was made from, as yet another new session; nothing existing is overwritten.');
  run(['undo', r.output_session_id.slice(0, 8)]);

  step('11. The sources are untouched');
  const changed = sources.filter(([f, h]) => sha(f) !== h);
  console.log(changed.length === 0 ? `All ${sources.length} original transcripts are byte-identical.` : `CHANGED: ${changed.map(([f]) => f).join(', ')}`);
  if (changed.length) process.exitCode = 1;

  step('12. What was done', 'The events log: one line per compaction, numbers and codes only, never transcript text.');
  run(['events']);
} catch (error) {
  process.exitCode = 1;
  const e = /** @type {{stderr?: string, stdout?: string, message: string}} */ (error);
  console.error(`demo failed: ${e.stderr?.trim() || e.stdout?.trim() || e.message}`);
} finally {
  if (keep) {
    // The user's own CLAUDE_CONFIG_DIR, XDG_* and so on would otherwise point the CLI back at their real homes.
    const envLine = Object.entries(env)
      .filter(([name]) => name !== 'PATH')
      .map(([name, value]) => `${name}=${shellQuote(value)}`)
      .join(' ');
    console.log(`\nThe demo home is kept at ${home}; to run a command in it, for example vault:`);
    console.log(`env ${envLine} ${shellQuote(process.execPath)} ${shellQuote(bin)} vault`);
  } else {
    rmSync(home, { recursive: true, force: true });
    console.log('\nThe demo home was removed; npm run demo -- --keep keeps it, to run the commands above in it.');
  }
}
