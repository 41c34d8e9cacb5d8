import { execFileSync } from 'node:child_process';
import { appendFileSync, chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync, utimesSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { validateApplyCommandResult, validateShowCommandOutput } from '../../schemas/generated/validators.js';
import { runCli, runJson } from '../helpers/cli.js';
import { DEMO_CLAUDE_ID, DEMO_CODEX_ID, DEMO_ELIDED_DETAIL, demoHome, listFiles, moveDemoClaudeSession, sha256File } from '../helpers/demo-home.js';
import { writeBigSession } from '../fixtures/claude/big-session.js';

type Home = ReturnType<typeof demoHome>;
let home: Home | undefined;
afterEach(() => home?.cleanup());

function snapshotOfStores(h: Home): Map<string, string> {
  return new Map([...listFiles(h.claudeHome), ...listFiles(h.codexHome)].map((f) => [f, sha256File(f)]));
}

describe('apply publishes a verified fork and never touches the source', () => {
  it.each([
    ['claude_code', DEMO_CLAUDE_ID],
    ['codex', DEMO_CODEX_ID],
  ])('%s: fork beside the source, receipt, event, resume command', async (provider, id) => {
    home = demoHome();
    const before = snapshotOfStores(home);
    const { code, json } = await runJson(['apply', id.slice(0, 8)], home.env);
    expect(code).toBe(0);
    expect(json.status).toBe('applied');
    expect(validateApplyCommandResult(json)).toBe(true);
    const r = json.receipt;
    expect(r.completed).toBe(true);
    expect(r.provider).toBe(provider);
    expect(r.snapshot_sha256).toBe(r.source_sha256);
    expect(r.snapshot_manifest_sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(r.bytes_after).toBeLessThan(r.bytes_before);
    // The demo sessions' directory does not exist here: no `cd` that would fail, and a note why.
    // Claude is given the fork's path, Codex its id: each finds the fork from any directory.
    expect(r.resume_command).toBe(provider === 'codex' ? `codex resume ${r.output_session_id}` : `claude --resume ${r.path}`);
    expect(r.resume_note).toContain("the session's directory /home/dev/projects/");
    expect(sha256File(r.path)).toBe(r.output_sha256);
    // The sources are byte-identical; the only new file in the stores is the fork.
    for (const [f, h] of before) expect(sha256File(f)).toBe(h);
    const added = [...listFiles(home.claudeHome), ...listFiles(home.codexHome)].filter((f) => !before.has(f));
    expect(added).toEqual([r.path]);
    const verified = await runJson(['verify', r.path], home.env);
    expect(verified.code).toBe(0);
    expect(verified.json.errors).toBe(0);
    const events = await runJson(['events'], home.env);
    expect(JSON.stringify(events.json)).toContain('transcript_compact');
  });

  it('is idempotent: the same apply returns the same fork without a second snapshot', async () => {
    home = demoHome();
    const first = await runJson(['apply', DEMO_CLAUDE_ID], home.env);
    const second = await runJson(['apply', DEMO_CLAUDE_ID], home.env);
    expect(second.code).toBe(0);
    expect(second.json.reused).toBe(true);
    expect(second.json.receipt.path).toBe(first.json.receipt.path);
    const history = await runJson(['history', DEMO_CLAUDE_ID], home.env);
    expect(JSON.stringify(history.json).match(/"sha256"/g)?.length).toBe(1);
    expect(second.json.warnings).toEqual([]);
    // A recovery snapshot damaged since (here one of its chunks) is named, not vouched for.
    const vault = join(home.dataHome, 'gobstopper', 'vault');
    const manifest = JSON.parse(readFileSync(join(vault, 'manifests', first.json.receipt.snapshot_manifest_sha256), 'utf8'));
    const chunk = join(vault, 'chunks', manifest.chunks[0]);
    writeFileSync(chunk, readFileSync(chunk).subarray(0, 1000));
    const third = await runJson(['apply', DEMO_CLAUDE_ID], home.env);
    expect(third.code).toBe(0);
    expect(third.json.warnings).toEqual([expect.stringMatching(/^the recovery snapshot [0-9a-f]{16} cannot be read \(.+\); once that is repaired, gobstopper snapshot /)]);
    expect(third.json.snapshot_unreadable).toMatch(/^vault damaged: /);
    // For people, the line naming the snapshot says so too, not only the warning.
    const human = await runCli(['apply', DEMO_CLAUDE_ID], home.env);
    expect(human.stdout).toContain(`recovery snapshot: ${first.json.receipt.snapshot_manifest_sha256} (cannot be read now; see the warning below)`);
  });

  it('a fork in a directory whose name holds control characters gets a resume command that pastes into bash whole', async () => {
    home = demoHome();
    const moved = moveDemoClaudeSession(home, '-home-dev-\u001b[31m-red\u202e');
    const odd = dirname(moved);
    const human = await runCli(['apply', DEMO_CLAUDE_ID], home.env);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).not.toMatch(/[\u001b\u202e]/);
    const line = human.stdout.split('\n').find((l) => l.startsWith('resume the new session: '))!;
    const command = line.slice('resume the new session: '.length);
    // What bash passes to `claude` when the line is pasted: the fork's real path.
    const argv = execFileSync('bash', ['-c', `claude() { printf '%s\\0' "$@"; }; ${command}`], { encoding: 'utf8' }).split('\0').slice(0, -1);
    expect(argv[0]).toBe('--resume');
    expect(dirname(argv[1]!)).toBe(odd);
    expect(existsSync(argv[1]!)).toBe(true);
  });

  it('on a narrow terminal the resume note wraps and the resume command stays whole', async () => {
    home = demoHome();
    const { json } = await runJson(['apply', DEMO_CLAUDE_ID], home.env);
    const narrow = await runCli(['apply', DEMO_CLAUDE_ID], home.env, { extraEnv: { COLUMNS: '60' } });
    const lines = narrow.stdout.split('\n');
    const command = lines.findIndex((l) => l.startsWith('resume the new session: '));
    expect(lines[command]).toBe(`resume the new session: ${json.receipt.resume_command}`);
    const note = lines.slice(command + 1).filter((l) => l.trim() !== '');
    expect(note.length).toBeGreaterThan(1);
    for (const line of note) expect(line.length).toBeLessThanOrEqual(60);
    expect(note[0]).toMatch(/^ {2}note: the session's directory/);
    // Rejoined, the wrapped lines say what the receipt says.
    expect(note.map((l) => l.trim()).join(' ')).toBe(`note: ${json.receipt.resume_note}`);
  });

  it('the resume command starts in the session\'s directory when it exists, and works from anywhere', async () => {
    home = demoHome();
    const project = join(home.root, 'my project');
    mkdirSync(join(project, 'sub'), { recursive: true });
    // The last turns ran in a subdirectory: the command must still find the fork.
    const lines = readFileSync(home.claudeSession, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l));
    lines.forEach((r, i) => {
      if (typeof r.cwd === 'string') r.cwd = i < lines.length - 10 ? project : join(project, 'sub');
    });
    writeFileSync(home.claudeSession, lines.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const hourAgo = new Date(Date.now() - 3600_000);
    utimesSync(home.claudeSession, hourAgo, hourAgo);
    for (const command of ['apply', 'fork']) {
      const { json } = await runJson([command, DEMO_CLAUDE_ID], home.env);
      const r = json.receipt;
      expect(r.resume_command).toMatch(new RegExp(`^cd '${project}(/sub)?' && claude --resume ${r.path}$`));
      expect(r.resume_note).toBeUndefined();
    }
  });

  it("the note about a session's missing directory stays on one line, whatever that directory's name holds", async () => {
    home = demoHome();
    // The recorded directory comes from the transcript: a line break in it is anybody's text.
    const cwd = '/gone/first\nsecond: looks like gobstopper';
    const lines = readFileSync(home.claudeSession, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l));
    for (const r of lines) if (typeof r.cwd === 'string') r.cwd = cwd;
    writeFileSync(home.claudeSession, lines.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const hourAgo = new Date(Date.now() - 3600_000);
    utimesSync(home.claudeSession, hourAgo, hourAgo);
    for (const command of ['apply', 'fork']) {
      const human = await runCli([command, DEMO_CLAUDE_ID], home.env);
      expect(human.code, human.stderr).toBe(0);
      const out = human.stdout.split('\n');
      expect(out.filter((l) => l.startsWith('second'))).toEqual([]);
      expect(out.filter((l) => l.startsWith('  note: '))).toEqual([
        "  note: the session's directory /gone/first\\u000asecond: looks like gobstopper no longer exists; the resumed session runs in the directory you start it from",
      ]);
      // --json keeps the note as the provider wrote it.
      expect((await runJson([command, DEMO_CLAUDE_ID], home.env)).json.receipt.resume_note).toContain(cwd);
    }
  });

  it('a fork in a home other than the client\'s default gets a resume command that names that home', async () => {
    home = demoHome();
    const altClaude = join(home.root, 'alt-claude');
    const altCodex = join(home.root, 'alt-codex');
    renameSync(home.claudeHome, altClaude);
    renameSync(home.codexHome, altCodex);
    const claude = await runJson(['apply', DEMO_CLAUDE_ID, '--claude-home', altClaude], home.env);
    expect(claude.json.receipt.resume_command).toBe(`CLAUDE_CONFIG_DIR=${altClaude} claude --resume ${claude.json.receipt.path}`);
    const codex = await runJson(['apply', DEMO_CODEX_ID, '--codex-home', altCodex], home.env);
    expect(codex.json.receipt.resume_command).toBe(`CODEX_HOME=${altCodex} codex resume ${codex.json.receipt.output_session_id}`);
    // Undo finds the session in the same home, and its restore resumes from there too.
    const restored = await runJson(['undo', DEMO_CLAUDE_ID, '--claude-home', altClaude], home.env);
    expect(restored.code).toBe(0);
    expect(restored.json.receipt.path.startsWith(altClaude)).toBe(true);
    expect(restored.json.receipt.resume_command).toBe(`CLAUDE_CONFIG_DIR=${altClaude} claude --resume ${restored.json.receipt.path}`);
  });

  it('a fork nobody has resumed yet is shown at its projected context, not its source\'s stale report', async () => {
    home = demoHome();
    const { json } = await runJson(['apply', DEMO_CLAUDE_ID], home.env);
    const after = json.plan.plan.context_tokens_after as number;
    const detected = await runCli(['detect', '--provider', 'claude_code'], home.env);
    const forkLine = detected.stdout.split('\n').find((l) => l.includes(json.receipt.output_session_id))!;
    expect(forkLine).toMatch(new RegExp(`~${after.toLocaleString('en-US')}\\s+projected`));
    expect(detected.stdout).toContain('projected: a fork gobstopper published and nobody has resumed yet');
    // Scripts see it too: the report stays in context_tokens, the projection is beside it.
    const rows = (await runJson(['detect', '--provider', 'claude_code'], home.env)).json as Array<{ session_id: string; context_tokens: number; projected_context_tokens?: number }>;
    expect(rows.find((r) => r.session_id === json.receipt.output_session_id)).toMatchObject({ context_tokens: 45_513, projected_context_tokens: after });
    expect(rows.find((r) => r.session_id === DEMO_CLAUDE_ID)).not.toHaveProperty('projected_context_tokens');
    const planned = await runCli(['plan', json.receipt.output_session_id], home.env);
    expect(planned.stdout).toContain(`note: gobstopper published this compaction and nobody has resumed it yet: its last usage report predates it, so its plan's projection (~${after.toLocaleString('en-US')} tokens) is counted instead`);
    // Every decision counts that projection, not the source's stale report (45,513).
    const again = await runJson(['plan', json.receipt.output_session_id, '--trigger', '1000', '--floor', '0'], home.env);
    expect(again.json.status === 'plan' ? again.json.plan.context_tokens_before : again.json.context_tokens_before).toBe(after);
    const evaluated = await runJson(['eval', json.receipt.output_session_id, '--strategy', 'elide', '--trigger', '1000', '--floor', '0'], home.env);
    expect(evaluated.json).toMatchObject({ token_basis: 'projected', context_tokens: after });
    // The receipt keeps the projection: without the events log every command still counts it.
    expect(json.receipt.context_tokens_after).toBe(after);
    rmSync(join(home.dataHome, 'gobstopper', 'events.jsonl'));
    const fromReceipt = await runJson(['eval', json.receipt.output_session_id, '--strategy', 'elide', '--trigger', '1000', '--floor', '0'], home.env);
    expect(fromReceipt.json).toMatchObject({ token_basis: 'projected', context_tokens: after });
    expect((await runCli(['detect', '--provider', 'claude_code'], home.env)).stdout).toMatch(new RegExp(`~${after.toLocaleString('en-US')}\\s+projected`));
    // A fork of that fork, untouched too, holds the same records: the same projection counts.
    const copied = await runJson(['fork', json.receipt.output_session_id], home.env);
    expect((await runJson(['eval', copied.json.receipt.output_session_id, '--strategy', 'elide', '--trigger', '1000', '--floor', '0'], home.env)).json).toMatchObject({ token_basis: 'projected', context_tokens: after });
    // A copy elsewhere (a home copied or moved, a fork copied by hand) holds the same bytes, stale report included.
    const elsewhere = join(home.root, 'copied-home', 'projects', '-home-dev-projects-invoices');
    mkdirSync(elsewhere, { recursive: true });
    copyFileSync(json.receipt.path, join(elsewhere, basename(json.receipt.path)));
    const copiedEval = await runJson(['eval', join(elsewhere, basename(json.receipt.path)), '--strategy', 'elide', '--trigger', '1000', '--floor', '0'], home.env);
    expect(copiedEval.json).toMatchObject({ token_basis: 'projected', context_tokens: after });
    // A home reached through a symbolic link is the same home.
    const linked = `${home.claudeHome}-link`;
    symlinkSync(home.claudeHome, linked);
    const viaLink = await runJson(['detect', '--provider', 'claude_code'], { ...home.env, CLAUDE_CONFIG_DIR: linked });
    expect(viaLink.json.find((r: { session_id: string }) => r.session_id === json.receipt.output_session_id).active).toBe(false);
    const linkedEval = await runJson(['eval', json.receipt.output_session_id, '--strategy', 'elide', '--trigger', '1000', '--floor', '0'], { ...home.env, CLAUDE_CONFIG_DIR: linked });
    expect(linkedEval.json).toMatchObject({ token_basis: 'projected', context_tokens: after });
    // A projection above the report it replaces (an edited receipt) is not believed.
    const receiptFile = join(home.dataHome, 'gobstopper', 'vault', 'operations', `${json.receipt.operation}.json`);
    const receipt = JSON.parse(readFileSync(receiptFile, 'utf8'));
    writeFileSync(receiptFile, JSON.stringify({ ...receipt, context_tokens_after: 999_999 }));
    expect((await runJson(['eval', json.receipt.output_session_id, '--strategy', 'elide', '--trigger', '1000', '--floor', '0'], home.env)).json.token_basis).toBe('estimated');
    // A receipt from before projections were kept, and no log: the records' own estimate, never the stale report.
    const { context_tokens_after: _kept, ...older } = receipt;
    writeFileSync(receiptFile, JSON.stringify(older));
    const unprojected = await runJson(['eval', json.receipt.output_session_id, '--strategy', 'elide', '--trigger', '1000', '--floor', '0'], home.env);
    expect(unprojected.json.token_basis).toBe('estimated');
    expect(unprojected.json.context_tokens).toBeLessThan(json.plan.plan.context_tokens_before);
    // Once the client appends to it, the fork is an ordinary session again.
    appendFileSync(json.receipt.path, readFileSync(json.receipt.path, 'utf8').split('\n')[0] + '\n');
    expect((await runCli(['detect', '--provider', 'claude_code'], home.env)).stdout).not.toContain('projected');
  });

  it('undo of a fork says the source is unchanged since its snapshot, and archives the source once it has changed', async () => {
    home = demoHome();
    const { json } = await runJson(['apply', DEMO_CLAUDE_ID], home.env);
    const fork = json.receipt.output_session_id as string;
    const first = await runCli(['undo', fork], home.env);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain(`${home.claudeSession} is unchanged since that snapshot`);
    expect(first.stdout).not.toContain('archived as');
    appendFileSync(home.claudeSession, readFileSync(home.claudeSession, 'utf8').split('\n')[0] + '\n');
    const second = await runCli(['undo', fork], home.env);
    expect(second.code).toBe(0);
    expect(second.stdout).toMatch(/the current file is archived as [0-9a-f]{64}/);
  });

  it('undo does not name a damaged snapshot as the current file\'s archive: it refuses and publishes nothing', async () => {
    home = demoHome();
    const original = readFileSync(home.claudeSession);
    const older = await runJson(['snapshot', DEMO_CLAUDE_ID], home.env);
    appendFileSync(home.claudeSession, original.toString('utf8').split('\n')[0] + '\n');
    expect((await runJson(['snapshot', DEMO_CLAUDE_ID], home.env)).code).toBe(0);
    // Back to the older state, whose only archive then loses a chunk.
    writeFileSync(home.claudeSession, original);
    const vault = join(home.dataHome, 'gobstopper', 'vault');
    const manifest = JSON.parse(readFileSync(join(vault, 'manifests', older.json.entry.sha256), 'utf8'));
    const chunk = join(vault, 'chunks', manifest.chunks[0]);
    writeFileSync(chunk, readFileSync(chunk).subarray(0, 100));
    const stores = snapshotOfStores(home);
    const undone = await runJson(['undo', DEMO_CLAUDE_ID], home.env);
    expect(undone.code).toBe(1);
    expect(undone.json.error.message).toMatch(/^vault damaged: /);
    expect(snapshotOfStores(home)).toEqual(stores);
  });

  it('detect tells the files gobstopper published from the sessions they were made from, resumed or not', async () => {
    home = demoHome();
    const { json } = await runJson(['apply', DEMO_CLAUDE_ID], home.env);
    // An empty --sha is refused, not read as "the newest" (which would publish a restore).
    const empty = await runJson(['undo', DEMO_CLAUDE_ID, '--sha', ''], home.env);
    expect(empty.code).toBe(2);
    expect(empty.json.error).toMatchObject({ code: 'invalid_sha', message: expect.stringContaining('--sha is empty') });
    const restored = await runJson(['undo', DEMO_CLAUDE_ID], home.env);
    const fork = json.receipt.output_session_id as string;
    const rows = (await runJson(['detect', '--provider', 'claude_code'], home.env)).json as Array<{ session_id: string; published?: Record<string, unknown> }>;
    expect(rows.find((r) => r.session_id === fork)!.published).toEqual({
      kind: 'compact',
      source_session_id: DEMO_CLAUDE_ID,
      strategy: json.plan.plan.strategy,
      snapshot_manifest_sha256: json.receipt.snapshot_manifest_sha256,
      resumed: false,
    });
    expect(rows.find((r) => r.session_id === restored.json.receipt.output_session_id)!.published).toMatchObject({ kind: 'restore', source_session_id: DEMO_CLAUDE_ID });
    expect(rows.find((r) => r.session_id === DEMO_CLAUDE_ID)).not.toHaveProperty('published');
    const table = (await runCli(['detect', '--provider', 'claude_code'], home.env)).stdout.replace(/\s+/g, ' ');
    expect(table).toContain(`${fork.slice(0, 8)} from ${DEMO_CLAUDE_ID.slice(0, 8)} (compacted by strategy ${json.plan.plan.strategy})`);
    expect(table).toContain(`${restored.json.receipt.output_session_id.slice(0, 8)} from ${DEMO_CLAUDE_ID.slice(0, 8)} (restore)`);
    // A client that resumes the fork leaves it a fork.
    appendFileSync(json.receipt.path, readFileSync(json.receipt.path, 'utf8').split('\n')[0] + '\n');
    const after = (await runJson(['detect', '--provider', 'claude_code'], home.env)).json as Array<{ session_id: string; published?: { resumed: boolean } }>;
    expect(after.find((r) => r.session_id === fork)!.published!.resumed).toBe(true);
    expect((await runCli(['detect', '--provider', 'claude_code'], home.env)).stdout.replace(/\s+/g, ' ')).toContain(`(compacted by strategy ${json.plan.plan.strategy}, resumed)`);
  });

  it('history and show of a fork say which session holds its archived states; show takes a short snapshot prefix', async () => {
    home = demoHome();
    const { json } = await runJson(['apply', DEMO_CLAUDE_ID], home.env);
    const fork = json.receipt.output_session_id as string;
    const expected = `${fork} has not been archived itself: it is a compacted fork gobstopper published from ${DEMO_CLAUDE_ID}; gobstopper history ${DEMO_CLAUDE_ID} lists that session's archived states, and gobstopper undo ${fork} restores the one it was made from`;
    for (const args of [['history', fork.slice(0, 8)], ['show', fork.slice(0, 8)], ['history', json.receipt.path]]) {
      const refused = await runJson(args, home.env);
      expect(refused.code).toBe(1);
      expect(refused.json.error).toMatchObject({ code: 'session_not_archived', message: expected, details: { source_session_id: DEMO_CLAUDE_ID } });
    }
    // Its source's history is where the hint points.
    expect((await runJson(['history', DEMO_CLAUDE_ID.slice(0, 8)], home.env)).json[0].sha256).toBe(json.receipt.snapshot_manifest_sha256);
    // An 8-character snapshot prefix names the snapshot when it names no session.
    const shown = await runJson(['show', json.receipt.snapshot_manifest_sha256.slice(0, 8)], home.env);
    expect(shown.json).toMatchObject({ sha256: json.receipt.snapshot_manifest_sha256, session_id: DEMO_CLAUDE_ID });
    expect((await runJson(['show', 'ffff0000'], home.env)).json.error.code).toBe('session_not_archived');
    // The fork's retained bytes are not indexed; show names them by the receipt that published them.
    const retained = await runJson(['show', json.receipt.output_manifest_sha256], home.env);
    expect(validateShowCommandOutput(retained.json), JSON.stringify(validateShowCommandOutput.errors)).toBe(true);
    expect(retained.json).toMatchObject({
      sha256: json.receipt.output_manifest_sha256,
      source_sha256: json.receipt.output_sha256,
      provider: 'claude_code',
      session_id: fork,
      path: json.receipt.path,
      strategy: json.receipt.strategy,
      ts: json.receipt.ts,
      output_of_operation: json.receipt.operation,
    });
    expect((await runCli(['show', json.receipt.output_manifest_sha256], home.env)).stdout).toMatch(new RegExp(`^session:\\s+${fork} \\(the published output of operation ${json.receipt.operation.slice(0, 16)}; retained, not indexed\\)$`, 'm'));
    // The digest show prints for those bytes names them too, as a source's digest names its snapshot.
    for (const args of [['show', json.receipt.output_sha256], ['search-snapshot', json.receipt.output_sha256, '--query', 'x'], ['read-snapshot', json.receipt.output_sha256, '--record', '0']]) {
      const byDigest = await runJson(args, home.env);
      expect(byDigest.code, `${args[0]}: ${JSON.stringify(byDigest.json)}`).toBe(0);
      expect(byDigest.json.sha256 ?? byDigest.json.snapshot_sha256, args[0]).toBe(json.receipt.output_manifest_sha256);
    }
    // vault of the fork says the same, as a listing (no error).
    expect((await runCli(['vault', fork.slice(0, 8)], home.env)).stdout.replace(/\s+/g, ' ').trim()).toBe(expected);
  });

  it("the commands the hint for a fork names run as given, when its source shares its first eight characters with another session", async () => {
    home = demoHome();
    // Codex ids are ordered by time: two threads started within a minute share their first eight characters.
    const neighbour = `${DEMO_CODEX_ID.slice(0, 9)}0000-7000-8000-000000000001`;
    const text = readFileSync(home.codexSession, 'utf8').replaceAll(DEMO_CODEX_ID, neighbour);
    const neighbourPath = join(home.codexDir, basename(home.codexSession).replace(DEMO_CODEX_ID, neighbour));
    writeFileSync(neighbourPath, text);
    const hourAgo = new Date(Date.now() - 3600_000);
    utimesSync(neighbourPath, hourAgo, hourAgo);
    expect((await runJson(['snapshot', neighbour], home.env)).code).toBe(0);
    const { json } = await runJson(['apply', DEMO_CODEX_ID], home.env);
    const fork = json.receipt.output_session_id as string;
    const refused = await runJson(['history', fork], home.env);
    const message = refused.json.error.message as string;
    const history = /gobstopper (history \S+)/.exec(message)![1]!.split(' ');
    const listed = await runJson(history, home.env);
    expect(listed.code, JSON.stringify(listed.json)).toBe(0);
    expect(listed.json[0].sha256).toBe(json.receipt.snapshot_manifest_sha256);
    const undo = /gobstopper (undo \S+)/.exec(message)![1]!.split(' ');
    const restored = await runJson(undo, home.env);
    expect(restored.code, JSON.stringify(restored.json)).toBe(0);
    expect(restored.json.receipt.source_session_id).toBe(DEMO_CODEX_ID);
  });

  it('fork and undo publish no copy of a Codex sub-agent thread, which its client resumes only through its parent', async () => {
    home = demoHome();
    const records = readFileSync(home.codexSession, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l));
    records[0].payload.source = { subagent: { thread_spawn: { parent_thread_id: '019d2e40-0000-7000-8000-000000000000', depth: 1 } } };
    writeFileSync(home.codexSession, records.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const hourAgo = new Date(Date.now() - 3600_000);
    utimesSync(home.codexSession, hourAgo, hourAgo);
    const before = snapshotOfStores(home);
    const forked = await runJson(['fork', home.codexSession], home.env);
    expect(forked.code).toBe(1);
    expect(forked.json.error).toMatchObject({ code: 'not_a_session', details: { session_kind: 'subagent' } });
    expect((await runJson(['history', DEMO_CODEX_ID], home.env)).json.error.code).toBe('session_not_archived');
    // Archived as it is, it can still be exported, but not restored as a session.
    const archived = await runJson(['snapshot', home.codexSession], home.env);
    expect(archived.code).toBe(0);
    const restored = await runJson(['undo', home.codexSession], home.env);
    expect(restored.code).toBe(1);
    expect(restored.json.error).toMatchObject({ code: 'not_a_session', details: { session_kind: 'subagent' } });
    expect(restored.json.error.message).toContain(`gobstopper export ${archived.json.entry.sha256} --output <new file>`);
    expect(snapshotOfStores(home)).toEqual(before);
  });

  it('a prune started while undo restores waits for it, so the snapshot undo chose is never removed under it', async () => {
    home = demoHome();
    const first = (await runJson(['snapshot', DEMO_CLAUDE_ID], home.env)).json.entry.sha256 as string;
    // A newer state of the session: prune --keep 1 would drop the first one.
    appendFileSync(home.claudeSession, readFileSync(home.claudeSession, 'utf8').split('\n')[1] + '\n');
    utimesSync(home.claudeSession, new Date(Date.now() - 3600_000), new Date(Date.now() - 3600_000));
    await runJson(['snapshot', DEMO_CLAUDE_ID], home.env);
    const dist = (path: string) => import(join(import.meta.dirname, '..', '..', 'dist', path));
    const { Runtime } = (await dist('kernel/services/runtime.js')) as typeof import('../../kernel/services/runtime.js');
    const { undo } = (await dist('kernel/services/undo.js')) as typeof import('../../kernel/services/undo.js');
    const { pruneVault } = (await dist('kernel/vault/prune.js')) as typeof import('../../kernel/vault/prune.js');
    const { vaultLayout } = (await dist('kernel/vault/layout.js')) as typeof import('../../kernel/vault/layout.js');
    const env = { ...process.env, ...home.env };
    const layout = vaultLayout(env);
    const runtime = new Runtime({ env });
    try {
      const finished: string[] = [];
      const undoing = undo(runtime, DEMO_CLAUDE_ID, { sha: first }).then((r) => (finished.push('undo'), r));
      // Undo has chosen its snapshot once it has a staging file to restore it into.
      const staging = join(home.dataHome, 'gobstopper', 'staging');
      while (!existsSync(staging) || readdirSync(staging).length === 0) await new Promise((done) => setTimeout(done, 1));
      const pruning = pruneVault(layout, { keep: 1, apply: true }, env).then((r) => (finished.push('prune'), r));
      const [restored] = await Promise.all([undoing, pruning]);
      expect(finished).toEqual(['undo', 'prune']);
      // The receipt names a snapshot that is still there; prune keeps it, and runs again without complaint.
      expect(restored.receipt.snapshot_manifest_sha256).toBe(first);
      expect(existsSync(join(layout.manifests, first))).toBe(true);
      await expect(pruneVault(layout, { keep: 1 }, env)).resolves.toMatchObject({ dry_run: true });
    } finally {
      await runtime.close();
    }
  });

  it('says so when the source already fails verify: the fork keeps those errors', async () => {
    home = demoHome();
    const lines = readFileSync(home.claudeSession, 'utf8').trimEnd().split('\n');
    const at = lines.findIndex((l) => l.includes('"tool_result"'));
    const record = JSON.parse(lines[at]!);
    record.message.content[0].tool_use_id = 'toolu_nowhere';
    lines[at] = JSON.stringify(record);
    writeFileSync(home.claudeSession, lines.join('\n') + '\n');
    const hourAgo = new Date(Date.now() - 3600_000);
    utimesSync(home.claudeSession, hourAgo, hourAgo);
    const { code, json } = await runJson(['apply', DEMO_CLAUDE_ID], home.env);
    expect(code).toBe(0);
    expect(json.warnings).toEqual([expect.stringMatching(/^the source already had 1 verify error\(s\) \(orphan_tool_use\) and the fork keeps them/)]);
    const human = await runCli(['apply', DEMO_CLAUDE_ID], home.env);
    expect(human.stdout).toContain('already applied');
    // The resume command's caveat is part of the answer, right under it.
    expect(human.stdout).toMatch(/resume the new session: claude --resume \S+\n  note: the session's directory \/home\/dev\/projects\/invoices no longer exists/);
    expect(human.stderr).toContain('warning: the source already had 1 verify error(s)');
  });

  it('a tool_result whose call is gone is a warning, as the client resumes the session without it: verify passes and fork copies it', async () => {
    home = demoHome();
    const lines = readFileSync(home.claudeSession, 'utf8').trimEnd().split('\n');
    const use = lines.findIndex((l) => l.includes('"tool_use"'));
    const record = JSON.parse(lines[use]!);
    // The call's record goes and its children hang from its parent, as realclients.md case D.
    for (let i = use + 1; i < lines.length; i += 1) {
      const child = JSON.parse(lines[i]!);
      if (child.parentUuid === record.uuid) lines[i] = JSON.stringify({ ...child, parentUuid: record.parentUuid });
    }
    lines.splice(use, 1);
    writeFileSync(home.claudeSession, lines.join('\n') + '\n');
    const hourAgo = new Date(Date.now() - 3600_000);
    utimesSync(home.claudeSession, hourAgo, hourAgo);
    const verified = await runJson(['verify', home.claudeSession], home.env);
    expect(verified.code, verified.stderr).toBe(0);
    expect(verified.json.findings).toEqual([expect.objectContaining({ severity: 'warning', code: 'orphan_tool_result' })]);
    const forked = await runJson(['fork', DEMO_CLAUDE_ID], home.env);
    expect(forked.code, forked.stderr).toBe(0);
    expect(existsSync(forked.json.receipt.path)).toBe(true);
  });

  it('an apply whose edits another strategy already published returns that fork and says whose it is', async () => {
    home = demoHome();
    const low = ['--trigger', '1000', '--floor', '500'];
    const first = await runJson(['apply', DEMO_CLAUDE_ID, '--strategy', 'cache_aware', ...low], home.env);
    expect(first.json.status).toBe('applied');
    // scored picks the same records here: the same operation, so the same fork.
    const again = await runCli(['apply', DEMO_CLAUDE_ID, '--strategy', 'scored', ...low], home.env);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`already applied by cache_aware, whose edits were the same: ${first.json.receipt.path}`);
  });

  it('the vault finds and reads back a detail the fork elided', async () => {
    home = demoHome();
    const { json } = await runJson(['apply', DEMO_CLAUDE_ID], home.env);
    const sha = json.receipt.snapshot_manifest_sha256;
    expect(readFileSync(json.receipt.path, 'utf8')).not.toContain(DEMO_ELIDED_DETAIL);
    const found = await runJson(['search-snapshot', sha, '--query', DEMO_ELIDED_DETAIL], home.env);
    expect(found.code).toBe(0);
    expect(found.json.matches.length).toBeGreaterThan(0);
    expect(JSON.stringify(found.json)).not.toContain(DEMO_ELIDED_DETAIL);
    const record = found.json.matches[0].record_index;
    const page = await runJson(['read-snapshot', sha, '--record', String(record), '--max-bytes', '16384'], home.env);
    expect(page.json.content).toContain(DEMO_ELIDED_DETAIL);
    expect(page.json.content_trust).toBe('untrusted_archived_data');
    // The receipt's snapshot_sha256 (the source's digest, the original's field) names the same snapshot.
    const source = json.receipt.snapshot_sha256;
    expect(source).not.toBe(sha);
    expect((await runJson(['search-snapshot', source, '--query', DEMO_ELIDED_DETAIL], home.env)).json.snapshot_sha256).toBe(sha);
    expect((await runJson(['read-snapshot', source, '--record', String(record)], home.env)).json.snapshot_sha256).toBe(sha);
    expect((await runJson(['show', source], home.env)).json.sha256).toBe(sha);
  });

  it('a fork gobstopper just wrote is not live: detect says idle and it can be compacted at once, until a client writes to it', async () => {
    home = demoHome();
    const forked = await runJson(['fork', DEMO_CLAUDE_ID], home.env);
    expect(forked.code).toBe(0);
    const forkPath = forked.json.receipt.path;
    const row = (await runJson(['detect'], home.env)).json.find((r: { path: string }) => r.path === forkPath);
    expect(row.active).toBe(false);
    const applied = await runJson(['apply', forkPath], home.env);
    expect(applied.code).toBe(0);
    expect(applied.json.status).toBe('applied');
    // Once a client appends to it, it is live again.
    appendFileSync(forkPath, readFileSync(forkPath, 'utf8').split('\n')[0] + '\n');
    expect((await runJson(['detect'], home.env)).json.find((r: { path: string }) => r.path === forkPath).active).toBe(true);
  });

  it('recall finds the state card of a fork the moment apply has published it', async () => {
    home = demoHome();
    const applied = await runJson(['apply', DEMO_CLAUDE_ID], home.env);
    const rows = (await runJson(['recall'], home.env)).json;
    expect(rows.map((r: { session_id: string }) => r.session_id)).toEqual([applied.json.receipt.output_session_id]);
    expect(rows[0].snapshot_sha).toBe(applied.json.receipt.output_manifest_sha256);
    // For people: a query that matches nothing is named, and lines fit the terminal.
    const none = await runCli(['recall', '--query', 'zzzz-nowhere'], home.env);
    expect(none.stdout.trim()).toBe("no state-card digest mentions 'zzzz-nowhere'");
    const narrow = await runCli(['recall'], home.env, { extraEnv: { COLUMNS: '80' } });
    const body = narrow.stdout.split('\n').filter((l) => !l.includes('read-snapshot'));
    expect(Math.max(...body.map((l) => l.length))).toBeLessThanOrEqual(80);
    expect(narrow.stdout).not.toContain('score');
  });

  it("apply records the fork's card in a card file, and recall --query answers from it", async () => {
    home = demoHome();
    const applied = await runJson(['apply', DEMO_CLAUDE_ID], home.env);
    expect(applied.code).toBe(0);
    const output = applied.json.receipt.output_manifest_sha256;
    const file = join(home.dataHome, 'gobstopper', 'vault', 'cards', `${output}.json`);
    const written = JSON.parse(readFileSync(file, 'utf8'));
    expect(written).toMatchObject({ schema_version: 1, manifest_sha256: output });
    expect(written.cards.length).toBeGreaterThan(0);
    // A word only the card file holds: recall found the card there, not by reading the fork's bytes.
    for (const c of written.cards) c.digest.open_tasks = ['zz-recorded-in-the-card-file'];
    writeFileSync(file, JSON.stringify(written), { mode: 0o600 });
    const found = await runJson(['recall', '--query', 'zz-recorded-in-the-card-file'], home.env);
    expect(found.code).toBe(0);
    expect(found.json.map((r: { snapshot_sha: string; session_id: string }) => [r.snapshot_sha, r.session_id])).toEqual([[output, applied.json.receipt.output_session_id]]);
  });

  it('recall cut at --limit says how many cards it found and how many it lists', async () => {
    home = demoHome();
    for (const id of [DEMO_CLAUDE_ID, DEMO_CODEX_ID]) await runJson(['apply', id], home.env);
    const cut = await runCli(['recall', '--limit', '1'], home.env);
    expect(cut.stdout.split('\n')[0]).toBe('found 2 state-card digest(s), first 1 listed');
    const whole = await runCli(['recall'], home.env);
    expect(whole.stdout.split('\n')[0]).toBe('found 2 state-card digest(s)');
  });

  it('recall --session of a compacted session, whose cards are in its fork under the fork id, names the fork to ask for', async () => {
    home = demoHome();
    const fork = (await runJson(['apply', DEMO_CLAUDE_ID], home.env)).json.receipt.output_session_id as string;
    const none = await runCli(['recall', '--session', DEMO_CLAUDE_ID.slice(0, 8)], home.env);
    expect(none.code).toBe(0);
    expect(none.stdout.split('\n').slice(0, 3)).toEqual([
      `no state-card digests found in the vault of sessions starting with '${DEMO_CLAUDE_ID.slice(0, 8)}'`,
      'compacting it put state cards in the forks it published, which hold them under their own ids:',
      `  gobstopper recall --session ${fork}   # 1 card(s)`,
    ]);
    expect((await runCli(['recall', '--session', DEMO_CLAUDE_ID, '--query', 'zz-not-in-any-card'], home.env)).stdout.trim()).toBe(`no state-card digest of sessions starting with '${DEMO_CLAUDE_ID}' mentions 'zz-not-in-any-card'`);
    // What it points to lists the card.
    const listed = await runJson(['recall', '--session', fork], home.env);
    expect(listed.json.map((r: { session_id: string }) => r.session_id)).toEqual([fork]);
    // --json stays the (empty) list of cards.
    expect((await runJson(['recall', '--session', DEMO_CLAUDE_ID.slice(0, 8)], home.env)).json).toEqual([]);
  });

  it("a damaged receipt costs only its own fork: recall, detect and history still know every other fork for what it is", async () => {
    home = demoHome();
    const claude = (await runJson(['apply', DEMO_CLAUDE_ID], home.env)).json.receipt;
    const codex = (await runJson(['apply', DEMO_CODEX_ID], home.env)).json.receipt;
    writeFileSync(join(home.dataHome, 'gobstopper', 'vault', 'operations', `${codex.operation}.json`), '{"bogus":1}');
    const recalled = await runJson(['recall'], home.env);
    expect(recalled.json.map((r: { session_id: string }) => r.session_id)).toEqual([claude.output_session_id]);
    expect(recalled.stderr).toContain(`${codex.operation}.json`);
    expect(recalled.stderr).toContain('the state cards of the fork it published are left out of this answer');
    // Taken for an ordinary session, the fork would show its source's stale report and be compacted again.
    const rows = (await runJson(['detect', '--provider', 'claude_code'], home.env)).json as Array<{ session_id: string; projected_context_tokens?: number }>;
    expect(rows.find((r) => r.session_id === claude.output_session_id)?.projected_context_tokens).toBe(claude.context_tokens_after);
    const history = await runJson(['history', claude.output_session_id], home.env);
    expect(history.json.error).toMatchObject({ code: 'session_not_archived', details: { source_session_id: DEMO_CLAUDE_ID } });
  });

  it('--rehearse without a usable client is refused before anything is archived or logged', async () => {
    home = demoHome();
    const before = snapshotOfStores(home);
    const data = join(home.dataHome, 'gobstopper');
    for (const bin of ['/nonexistent/claude', home.claudeDir]) {
      const refused = await runJson(['apply', DEMO_CLAUDE_ID, '--rehearse', '--claude-bin', bin], home.env);
      expect(refused.code).toBe(1);
      expect(refused.json).toMatchObject({ ok: false, error: { code: 'client_missing' } });
    }
    expect(existsSync(data) ? listFiles(data) : []).toEqual([]);
    expect(snapshotOfStores(home)).toEqual(before);
  });

  it('refuses a live session unless --allow-live', async () => {
    home = demoHome();
    const now = new Date();
    utimesSync(home.claudeSession, now, now);
    const refused = await runJson(['apply', DEMO_CLAUDE_ID], home.env);
    expect(refused.code).toBe(1);
    expect(refused.json).toMatchObject({ ok: false, error: { code: 'session_live', message: expect.stringContaining('was updated within the last 180 s') } });
    // A file dated ahead of the clock reads as live until then: waiting would not help, and it says so.
    const ahead = new Date(Date.now() + 2 * 3600_000);
    utimesSync(home.claudeSession, ahead, ahead);
    const future = await runJson(['apply', DEMO_CLAUDE_ID], home.env);
    expect(future.code).toBe(1);
    expect(future.json.error).toMatchObject({ code: 'session_live', message: expect.stringContaining("was modified later than this machine's clock says it is now (2h ahead), so it reads as live until then; if no client is writing to it, pass --allow-live") });
    const forced = await runJson(['apply', DEMO_CLAUDE_ID, '--allow-live'], home.env);
    expect(forced.code).toBe(0);
    expect(forced.json.status).toBe('applied');
  });

  it('refuses as live a session its client keeps writing while it is read, archiving nothing', async () => {
    home = demoHome();
    const path = join(home.claudeDir, 'b16b16b1-0000-4000-8000-000000000128.jsonl');
    writeBigSession(path, { targetBytes: 4 * 1024 * 1024, records: 2000 });
    const lines = readFileSync(path, 'utf8').trimEnd().split('\n');
    const last = lines[lines.length - 1]!;
    // Appends every millisecond or so for as long as apply runs: its parse meets a changing file.
    let running = true;
    const writing = (async () => {
      while (running) {
        appendFileSync(path, `${last}\n`);
        await new Promise((r) => setTimeout(r, 1));
      }
    })();
    const refused = await runJson(['apply', path], home.env).finally(() => (running = false));
    await writing;
    expect(refused.code).toBe(1);
    expect(refused.json).toMatchObject({ ok: false, error: { code: 'session_live' } });
    expect(existsSync(join(home.dataHome, 'gobstopper', 'vault', 'index.jsonl'))).toBe(false);
  });

  it('refuses a live session under auto too; --allow-live then names the client compaction and writes nothing', async () => {
    home = demoHome();
    const now = new Date();
    utimesSync(home.codexSession, now, now);
    const before = snapshotOfStores(home);
    const refused = await runJson(['apply', DEMO_CODEX_ID, '--strategy', 'auto'], home.env);
    expect(refused.code).toBe(1);
    expect(refused.json).toMatchObject({ ok: false, error: { code: 'session_live' } });
    const handed = await runJson(['apply', DEMO_CODEX_ID, '--strategy', 'auto', '--allow-live'], home.env);
    expect(handed.code).toBe(0);
    expect(handed.json.status).toBe('provider_control');
    expect(JSON.stringify(handed.json)).toContain('thread/compact/start');
    expect(snapshotOfStores(home)).toEqual(before);
  });

  it('refuses a cache-edit plan, which nothing hands to Claude Code: one clear error, nothing written; plan still shows it', async () => {
    home = demoHome();
    const before = snapshotOfStores(home);
    const refused = await runJson(['apply', DEMO_CLAUDE_ID, '--strategy', 'cache_edits'], home.env);
    expect(refused.code).toBe(1);
    expect(refused.json).toEqual({
      ok: false,
      error: { code: 'cache_edit_unsupported', message: expect.stringContaining('apply cannot carry out a cache edit (cache_edits: '), details: { strategy: 'cache_edits', tool_use_ids: expect.any(Number) } },
    });
    const human = await runCli(['apply', DEMO_CLAUDE_ID, '--strategy', 'cache_edits'], home.env);
    expect(human.code).toBe(1);
    expect(human.stdout).toBe('');
    expect(human.stderr.trim().split('\n')).toEqual([`gobstopper: ${refused.json.error.message}`]);
    expect(snapshotOfStores(home)).toEqual(before);
    expect(existsSync(join(home.dataHome, 'gobstopper'))).toBe(false);
    const planned = await runJson(['plan', DEMO_CLAUDE_ID, '--strategy', 'cache_edits'], home.env);
    expect(planned.code).toBe(0);
    expect(planned.json.plan.edits.map((e: { op: string }) => e.op)).toEqual(['cache_edit']);
  });

  it('below the trigger is a successful no-plan, and nothing is written', async () => {
    home = demoHome('[policy]\ntrigger_tokens = 5000000\nfloor_tokens = 8000\n');
    const before = snapshotOfStores(home);
    const { code, json } = await runJson(['apply', DEMO_CODEX_ID], home.env);
    expect(code).toBe(0);
    expect(json.status).toBe('no_plan');
    expect(validateApplyCommandResult(json)).toBe(true);
    expect(json.outcome.reason_code).toBe('below_trigger');
    expect(snapshotOfStores(home)).toEqual(before);
    expect(existsSync(join(home.dataHome, 'gobstopper', 'vault', 'index.jsonl'))).toBe(false);
  });

  it('two applies of the same session at once publish one fork', async () => {
    home = demoHome();
    const h = home;
    const [a, b] = await Promise.all([runJson(['apply', DEMO_CLAUDE_ID], h.env), runJson(['apply', DEMO_CLAUDE_ID], h.env)]);
    const ok = [a, b].filter((r) => r.code === 0);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    for (const r of [a, b]) if (r.code !== 0) expect(r.json.error.code).toBe('operation_running');
    const forks = listFiles(h.claudeDir).filter((f) => !f.endsWith(`${DEMO_CLAUDE_ID}.jsonl`));
    expect(forks).toHaveLength(1);
    // A refused run changed nothing: one archived state, and no failure logged for it.
    const history = await runJson(['history', DEMO_CLAUDE_ID], h.env);
    expect(JSON.stringify(history.json).match(/"sha256"/g)?.length).toBe(1);
    const events = await runJson(['events'], h.env);
    expect(events.json.by_outcome).toEqual({ applied: 1 });
  });

  it('a vault that cannot be used is one clear error: no crash, nothing archived or left behind', async () => {
    home = demoHome();
    const before = snapshotOfStores(home);
    const vault = join(home.dataHome, 'gobstopper', 'vault');
    mkdirSync(vault, { recursive: true, mode: 0o755 });
    chmodSync(vault, 0o755);
    const run = await runCli(['apply', DEMO_CLAUDE_ID, '--json'], home.env);
    expect(run.code).toBe(1);
    expect(run.stderr).not.toContain('at ');
    expect(JSON.parse(run.stdout)).toMatchObject({ ok: false, error: { code: 'vault_insecure' } });
    expect(snapshotOfStores(home)).toEqual(before);
    expect(listFiles(join(home.dataHome, 'gobstopper'))).toEqual([]);
  });

  it('a snapshot that fails once the operation started is one clear error, not a crash', async () => {
    home = demoHome();
    expect((await runJson(['apply', DEMO_CODEX_ID], home.env)).code).toBe(0);
    appendFileSync(join(home.dataHome, 'gobstopper', 'vault', 'index.jsonl'), 'not json\n');
    const before = snapshotOfStores(home);
    const vaultBefore = listFiles(join(home.dataHome, 'gobstopper', 'vault')).filter((f) => !f.endsWith('.lock'));
    const run = await runCli(['apply', DEMO_CLAUDE_ID, '--json'], home.env);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toMatchObject({ ok: false, error: { code: 'vault_damaged' } });
    expect(snapshotOfStores(home)).toEqual(before);
    // Not a chunk or manifest of the candidate either.
    expect(listFiles(join(home.dataHome, 'gobstopper', 'vault')).filter((f) => !f.endsWith('.lock'))).toEqual(vaultBefore);
  });

  it('a fork target already taken is refused before anything is archived; the fork of an apply the vault lost is named as that', async () => {
    home = demoHome();
    const first = (await runJson(['apply', DEMO_CLAUDE_ID], home.env)).json.receipt;
    const forkBytes = sha256File(first.path);
    // Without the vault that knew it, the same operation meets its own fork at its target.
    rmSync(join(home.dataHome, 'gobstopper'), { recursive: true, force: true });
    const before = snapshotOfStores(home);
    const again = await runJson(['apply', DEMO_CLAUDE_ID], home.env);
    expect(again.code).toBe(1);
    expect(again.json.error).toEqual({
      code: 'target_exists',
      message: `${first.path} is the fork an earlier apply of these same bytes and plan published, but the vault has no record of it (was the vault deleted?); nothing was written. Resume it as it is (${first.resume_command}), or move it elsewhere and run apply again to archive the source and record a new fork`,
      details: { path: first.path, output_session_id: first.output_session_id, resume_command: first.resume_command },
    });
    expect(snapshotOfStores(home)).toEqual(before);
    // Not even the vault's empty directories.
    expect(existsSync(join(home.dataHome, 'gobstopper'))).toBe(false);
    // A vault that lost only the receipt says the same, and archives nothing.
    expect((await runJson(['snapshot', DEMO_CODEX_ID], home.env)).code).toBe(0);
    const vaultBefore = listFiles(join(home.dataHome, 'gobstopper', 'vault')).map((f) => [f, sha256File(f)]);
    const lost = await runJson(['apply', DEMO_CLAUDE_ID], home.env);
    expect(lost.json.error).toEqual(again.json.error);
    expect(listFiles(join(home.dataHome, 'gobstopper', 'vault')).map((f) => [f, sha256File(f)])).toEqual(vaultBefore);
    expect(sha256File(first.path)).toBe(forkBytes);
    // A file there that is not that fork is only a taken name.
    writeFileSync(first.path, 'someone else\n');
    const taken = await runJson(['apply', DEMO_CLAUDE_ID], home.env);
    expect(taken.json.error).toEqual({ code: 'target_exists', message: `${first.path} already exists; gobstopper never overwrites a file (move it aside and run the command again)` });
    expect(readFileSync(first.path, 'utf8')).toBe('someone else\n');
  });

  it('a pending operation whose target is taken by another file says repair required and overwrites nothing', async () => {
    home = demoHome();
    const crashed = await runJson(['apply', DEMO_CLAUDE_ID], home.env, { extraEnv: { GOBSTOPPER_FAULT: 'apply.after_receipt' } });
    expect(crashed.code).toBe(1);
    expect(crashed.json.error.code).toBe('fault_injected');
    const receipts = listFiles(join(home.dataHome, 'gobstopper', 'vault', 'operations')).filter((f) => f.endsWith('.json'));
    expect(receipts).toHaveLength(1);
    const target = JSON.parse(readFileSync(receipts[0]!, 'utf8')).path as string;
    writeFileSync(target, 'someone else\n');
    const again = await runJson(['apply', DEMO_CLAUDE_ID], home.env);
    expect(again.code).toBe(1);
    expect(again.json.error.code).toBe('repair_required');
    expect(readFileSync(target, 'utf8')).toBe('someone else\n');
  });

  it('a fork a client has resumed since is the applied result, not a conflict', async () => {
    home = demoHome();
    const first = await runJson(['apply', DEMO_CLAUDE_ID], home.env);
    const fork = first.json.receipt.path as string;
    // What claude --resume does: it appends to the file and never rewrites what is there.
    appendFileSync(fork, JSON.stringify({ type: 'user', uuid: 'resumed-1', parentUuid: null, sessionId: first.json.receipt.output_session_id, message: { role: 'user', content: 'go on' } }) + '\n');
    // A tool call still running in the resumed session is the fork's own, not an error of the source.
    appendFileSync(fork, JSON.stringify({ type: 'assistant', uuid: 'resumed-2', parentUuid: 'resumed-1', sessionId: first.json.receipt.output_session_id, message: { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_running', name: 'Bash', input: { command: 'sleep 60' } }] } }) + '\n');
    const grown = readFileSync(fork);
    const again = await runCli(['apply', DEMO_CLAUDE_ID], home.env);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`already applied; the fork has been resumed since: ${fork}`);
    expect(again.stderr).not.toContain('verify error');
    expect((await runJson(['apply', DEMO_CLAUDE_ID], home.env)).json).toMatchObject({ status: 'applied', reused: true, resumed: true, receipt: { path: fork } });
    expect(readFileSync(fork).equals(grown)).toBe(true);
    // Bytes rewritten inside what was published are still a conflict that needs a person.
    writeFileSync(fork, Buffer.concat([Buffer.from('x'), grown.subarray(1)]));
    const rewritten = await runJson(['apply', DEMO_CLAUDE_ID], home.env);
    expect(rewritten.code).toBe(1);
    expect(rewritten.json.error).toMatchObject({ code: 'repair_required', message: expect.stringContaining('no longer begins with the bytes that were published there') });
  });

  it('a published fork that was deleted is published again, under its own id, by the next apply', async () => {
    home = demoHome();
    const first = await runJson(['apply', DEMO_CLAUDE_ID], home.env);
    const fork = first.json.receipt.path;
    const bytes = readFileSync(fork);
    rmSync(fork);
    const again = await runCli(['apply', DEMO_CLAUDE_ID], home.env);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`already applied; the fork had been removed and is published again: ${fork}`);
    expect(again.stderr).toContain(`${fork} had been removed since this compaction published it; it is published again from the bytes the vault kept`);
    expect(readFileSync(fork).equals(bytes)).toBe(true);
    // Once back, a further run has nothing to restore.
    const third = await runJson(['apply', DEMO_CLAUDE_ID], home.env);
    expect(third.json).toMatchObject({ status: 'applied', receipt: { path: fork, output_session_id: first.json.receipt.output_session_id } });
    // An undo of the compaction's output is still a fork of its own, under a new id.
    const undone = await runJson(['undo', first.json.receipt.output_manifest_sha256], home.env);
    expect(undone.code).toBe(0);
    const { output_session_id: oldId } = first.json.receipt;
    const { output_session_id: newId, path } = undone.json.receipt;
    expect(path).not.toBe(fork);
    expect(readFileSync(path, 'utf8')).toBe(bytes.toString('utf8').replaceAll(oldId, newId));
    // Named together with the fork it belongs to, the same snapshot is the same restore.
    const viaFork = await runJson(['undo', oldId, '--sha', first.json.receipt.output_manifest_sha256], home.env);
    expect(viaFork.code).toBe(0);
    expect(viaFork.json).toMatchObject({ reused: true, receipt: { output_session_id: newId, path } });
    // The restored compaction is counted at its plan's projection, as the fork was.
    const evaluated = await runJson(['eval', newId, '--strategy', 'elide', '--trigger', '1000', '--floor', '0'], home.env);
    expect(evaluated.json).toMatchObject({ token_basis: 'projected', context_tokens: first.json.plan.plan.context_tokens_after });
  });

  it('a rerun after a crash between receipt and publishing says it finished that apply', async () => {
    home = demoHome();
    const crashed = await runJson(['apply', DEMO_CLAUDE_ID], home.env, { extraEnv: { GOBSTOPPER_FAULT: 'apply.after_receipt' } });
    expect(crashed.json.error.code).toBe('fault_injected');
    const again = await runCli(['apply', DEMO_CLAUDE_ID], home.env);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/finished an earlier apply that stopped before publishing: \S+\.jsonl/);
    expect(again.stdout).not.toContain('already applied');
    const third = await runCli(['apply', DEMO_CLAUDE_ID], home.env);
    expect(third.stdout).toContain('already applied: ');
  });

  it('a symlink at the target is refused', async () => {
    home = demoHome();
    await runJson(['apply', DEMO_CLAUDE_ID], home.env, { extraEnv: { GOBSTOPPER_FAULT: 'apply.after_receipt' } });
    const receipt = listFiles(join(home.dataHome, 'gobstopper', 'vault', 'operations')).find((f) => f.endsWith('.json'))!;
    const target = JSON.parse(readFileSync(receipt, 'utf8')).path as string;
    symlinkSync('/nonexistent/elsewhere', target);
    const again = await runJson(['apply', DEMO_CLAUDE_ID], home.env);
    expect(again.code).toBe(1);
    expect(again.json.error.code).toBe('repair_required');
  });
});

describe('fork and undo finish an interrupted run instead of making a second copy', () => {
  it.each(['receipt.after_pending', 'publish.after_link', 'receipt.before_complete'])('killed at %s, the next run completes that fork under its own id', async (step) => {
    home = demoHome();
    const source = sha256File(home.claudeSession);
    const killed = await runCli(['fork', DEMO_CLAUDE_ID, '--json'], home.env, { extraEnv: { GOBSTOPPER_FAULT: `${step}:kill` } });
    expect(killed.signal).toBe('SIGKILL');
    const rerun = await runJson(['fork', DEMO_CLAUDE_ID], home.env);
    expect(rerun.code).toBe(0);
    expect(rerun.json.receipt.completed).toBe(true);
    const copies = listFiles(home.claudeDir).filter((f) => !f.endsWith(`${DEMO_CLAUDE_ID}.jsonl`));
    expect(copies).toEqual([rerun.json.receipt.path]);
    expect(sha256File(rerun.json.receipt.path)).toBe(rerun.json.receipt.output_sha256);
    expect(sha256File(home.claudeSession)).toBe(source);
    // Once complete, another fork is another copy, as always.
    const again = await runJson(['fork', DEMO_CLAUDE_ID], home.env);
    expect(again.json.receipt.output_session_id).not.toBe(rerun.json.receipt.output_session_id);

    // The same for a restore.
    const killedUndo = await runCli(['undo', DEMO_CLAUDE_ID, '--json'], home.env, { extraEnv: { GOBSTOPPER_FAULT: `${step}:kill` } });
    expect(killedUndo.signal).toBe('SIGKILL');
    const before = new Set(listFiles(home.claudeDir));
    const restored = await runJson(['undo', DEMO_CLAUDE_ID], home.env);
    expect(restored.code).toBe(0);
    expect(restored.json.receipt.completed).toBe(true);
    const added = listFiles(home.claudeDir).filter((f) => !before.has(f));
    // The restore the killed run linked is the one finished; none is added beside it.
    expect(added.length).toBeLessThanOrEqual(1);
    expect(listFiles(home.claudeDir).filter((f) => f.includes(restored.json.receipt.output_session_id))).toEqual([restored.json.receipt.path]);
    expect(listFiles(home.claudeDir)).toHaveLength(before.size + added.length);
    expect(listFiles(home.claudeDir).length).toBe(4);
  });
});

const STOPPED_BEFORE_PUBLISHING = ['receipt.after_pending', 'apply.after_receipt', 'publish.before_link'];

describe('apply survives a crash at every step', () => {
  const steps = [
    'vault.after_chunks',
    'vault.before_index',
    'apply.after_snapshot',
    'staging.after_create',
    'apply.before_render',
    'apply.after_render',
    'receipt.after_pending',
    'apply.after_receipt',
    'publish.before_link',
    'publish.after_link',
    'apply.after_publish',
    'receipt.before_complete',
  ];
  it.each(steps)('killed at %s: source intact, no partial fork, a rerun completes the same operation', async (step) => {
    home = demoHome();
    const before = snapshotOfStores(home);
    const killed = await runCli(['apply', DEMO_CLAUDE_ID, '--json'], home.env, { extraEnv: { GOBSTOPPER_FAULT: `${step}:kill` } });
    expect(killed.signal).toBe('SIGKILL');
    for (const [f, h] of before) expect(sha256File(f)).toBe(h);
    const visible = [...listFiles(home.claudeHome), ...listFiles(home.codexHome)].filter((f) => !before.has(f));
    expect(visible.length).toBeLessThanOrEqual(1);
    const rerun = await runJson(['apply', DEMO_CLAUDE_ID], home.env);
    expect(rerun.code).toBe(0);
    const r = rerun.json.receipt;
    expect(r.completed).toBe(true);
    // Stopped between its receipt and the link, the first run left the publishing to this one.
    expect(rerun.json.interrupted ?? false).toBe(STOPPED_BEFORE_PUBLISHING.includes(step));
    // Whatever was visible after the crash is exactly the completed fork.
    for (const f of visible) expect(f).toBe(r.path);
    expect(sha256File(r.path)).toBe(r.output_sha256);
    const forks = listFiles(home.claudeDir).filter((f) => !f.endsWith(`${DEMO_CLAUDE_ID}.jsonl`));
    expect(forks).toEqual([r.path]);
    const verified = await runJson(['verify', r.path], home.env);
    expect(verified.json.errors).toBe(0);
    // The events log says the operation was applied, once, whichever run finished it.
    const events = await runJson(['events'], home.env);
    expect(events.json.by_outcome.applied).toBe(1);
    await runJson(['apply', DEMO_CLAUDE_ID], home.env);
    expect((await runJson(['events'], home.env)).json.by_outcome.applied).toBe(1);
  });
});
