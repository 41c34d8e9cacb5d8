/**
 * `watch` end to end on the demo sessions: what a pass compacts, what it passes over without
 * reading, what it remembers, and that a dry run writes nothing.
 */
import { spawn } from 'node:child_process';
import { appendFileSync, chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync, utimesSync } from 'node:fs';
import { hostname } from 'node:os';
import { basename, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { validateWatchPass } from '../../schemas/generated/validators.js';
import { buildSdkFixtureBundle, fixturePluginBundle } from '../fixtures/bundles/build-bundle.js';
import { binPath, runCli, runJson } from '../helpers/cli.js';
import { DEMO_CLAUDE_ID, DEMO_CODEX_ID, demoHome, listFiles, moveDemoClaudeSession, sha256File } from '../helpers/demo-home.js';
import { modeBoundUser } from '../helpers/mode-bound-user.js';

type Home = ReturnType<typeof demoHome>;
let home: Home | undefined;
afterEach(() => home?.cleanup());

const statePath = (h: Home) => join(h.dataHome, 'gobstopper', 'watch-state-all.json');
const lockPath = (h: Home, provider: string) => join(h.dataHome, 'gobstopper', 'locks', `watch-${provider}.lock`);
const config = (extra = '') => `[policy]\nstrategy = "compacted"\ntrigger_tokens = 20000\nfloor_tokens = 8000\n${extra}`;
const byId = (pass: any) => Object.fromEntries(pass.decisions.map((d: any) => [d.session_id, d]));
const hashes = (dirs: string[]) => Object.fromEntries(dirs.flatMap(listFiles).map((f) => [f, sha256File(f)]));

/** `watch --interval 1 --json` (and `args`) running in the background, its output gathered as it comes. */
function watchLoop(h: Home, args: string[] = []) {
  const child = spawn(process.execPath, [binPath, 'watch', '--interval', '1', '--json', ...args], { env: { PATH: process.env.PATH ?? '', ...h.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return {
    child,
    exited,
    output: () => out,
    /** The complete lines so far, each a JSON object (a line still being written is left for later). */
    lines: () => out.slice(0, out.lastIndexOf('\n') + 1).split('\n').filter(Boolean).map((l) => JSON.parse(l)),
    /** Waits up to a minute for `check` to hold. */
    waitFor: async (check: () => boolean) => {
      const deadline = Date.now() + 60_000;
      while (!check() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    },
  };
}

/** Over two dry-run passes of a looping watch, the warning `said` picks out comes in the first only. */
async function expectSaidOnceWhileItLasts(h: Home, said: (warning: string) => boolean): Promise<void> {
  const loop = watchLoop(h, ['--dry-run']);
  await loop.waitFor(() => loop.lines().length >= 2);
  loop.child.kill('SIGINT');
  expect(await loop.exited).toBe(130);
  const passes = loop.lines().filter((l) => l.pass !== undefined);
  expect((passes[0].warnings ?? []).filter(said)).toHaveLength(1);
  expect(passes.slice(1).flatMap((p) => p.warnings ?? []).filter(said)).toEqual([]);
}

/**
 * Runs a looping watch until it has printed `count` passes, stops it with Ctrl-C (exit 130) and
 * returns its passes, each checked against the schema.
 */
async function loopPasses(h: Home, count: number): Promise<any[]> {
  const loop = watchLoop(h);
  await loop.waitFor(() => loop.lines().length >= count);
  loop.child.kill('SIGINT');
  expect(await loop.exited).toBe(130);
  const passes = loop.lines().filter((l) => l.pass !== undefined);
  expect(passes.length).toBeGreaterThanOrEqual(count);
  for (const pass of passes) expect(validateWatchPass(pass)).toBe(true);
  return passes;
}

/**
 * A watch pass over the demo Claude session whose strategy (elide's plan, after a pause) has just
 * been asked for: the file is read, nothing is archived or published yet. The pending pass comes
 * wrapped, so that awaiting this does not await the pass too.
 */
async function watchPausedAtPlan(): Promise<{ home: Home; pass: ReturnType<typeof runJson<any>> }> {
  const home = demoHome(config('[provider.claude_code]\nstrategy = "slow_elide"\n'));
  const log = join(home.root, 'slow-relay.log');
  const bundle = await buildSdkFixtureBundle(join(home.root, 'slow-relay'), 'slow-relay-sdk-strategy.ts', { id: 'slow-relay', args: [log], provides: { strategies: ['slow_elide'] } });
  expect((await runCli(['plugin', 'add', bundle], home.env)).code).toBe(0);
  const running = runJson(['watch', '--once', '--provider', 'claude_code'], home.env);
  while (!(existsSync(log) && readFileSync(log, 'utf8').includes('propose\n'))) await new Promise((r) => setTimeout(r, 50));
  return { home, pass: running };
}

describe('watch', () => {
  it('one pass compacts every idle session over its trigger into a fork, and the next pass leaves them be', async () => {
    home = demoHome();
    const before = { claude: sha256File(home.claudeSession), codex: sha256File(home.codexSession) };
    const first = await runJson(['watch', '--once'], home.env);
    expect(first.code, first.stderr).toBe(0);
    expect(validateWatchPass(first.json)).toBe(true);
    const decided = byId(first.json);
    for (const id of [DEMO_CLAUDE_ID, DEMO_CODEX_ID]) {
      expect(decided[id]).toMatchObject({ outcome: 'compacted', strategy: 'compacted', reused: false });
      expect(decided[id].context_tokens_after).toBeLessThan(decided[id].context_tokens);
      expect(existsSync(decided[id].fork.path)).toBe(true);
      expect(decided[id].fork.resume_command).toContain(decided[id].fork.session_id);
    }
    expect(sha256File(home.claudeSession)).toBe(before.claude);
    expect(sha256File(home.codexSession)).toBe(before.codex);
    // The forks verify, as apply's do.
    const verified = await runJson(['verify', decided[DEMO_CLAUDE_ID].fork.path], home.env);
    expect(verified.code).toBe(0);

    const second = await runJson(['watch', '--once'], home.env);
    expect(second.code).toBe(0);
    expect(second.json.decisions).toEqual([]);
    expect(second.json.skipped).toMatchObject({ settled: 2, published: 2 });
    const text = await runCli(['watch', '--once'], home.env);
    expect(text.stdout).toMatch(/pass 1: 4 sessions: 2 unchanged, 2 unresumed forks\n$/);
  });

  it('--dry-run says what it would compact and writes nothing at all', async () => {
    // A trigger of 15,000: the compaction gets the Claude session under 20,000 but not under that.
    home = demoHome(config().replace('20000', '15000'));
    const files = hashes([home.claudeHome, home.codexHome]);
    const dry = await runCli(['watch', '--once', '--dry-run'], home.env);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain(`would compact claude_code ${DEMO_CLAUDE_ID}: 45,513 → `);
    expect(dry.stdout).toContain(`would compact codex ${DEMO_CODEX_ID}`);
    expect(dry.stdout).toMatch(/pass 1 \(dry run\): 2 sessions: 2 would be compacted/);
    // Not getting under the trigger is said under the session, as plan says it.
    expect(dry.stdout).toMatch(new RegExp(`would compact claude_code ${DEMO_CLAUDE_ID}: 45,513 → ([0-9,]+) tokens \\(compacted\\)\n  note: this leaves ~\\1 tokens, still over the trigger 15,000;`));
    expect(hashes([home.claudeHome, home.codexHome])).toEqual(files);
    expect(existsSync(join(home.dataHome, 'gobstopper'))).toBe(false);
  });

  it('--dry-run says what the real pass would: a plan applied already returns its fork, a torn last line is refused', async () => {
    home = demoHome(config());
    const applied = await runJson(['apply', DEMO_CLAUDE_ID], home.env);
    expect(applied.code, applied.stderr).toBe(0);
    // The fork's own unresumed state is passed over; the codex session gets a torn last line.
    appendFileSync(home.codexSession, '{"timestamp":"2026-02-23T12:00:00Z","type":"event_msg","payload":{"type":"agent_');
    const old = new Date(Date.now() - 3600_000);
    utimesSync(home.codexSession, old, old);
    utimesSync(home.claudeSession, old, old);
    const files = hashes([home.claudeHome, home.codexHome]);
    const dry = await runJson(['watch', '--once', '--dry-run'], home.env);
    const decisions = byId(dry.json);
    expect(decisions[DEMO_CLAUDE_ID]).toMatchObject({ outcome: 'compacted', reused: true, fork: { path: applied.json.receipt.path } });
    expect(decisions[DEMO_CODEX_ID]).toMatchObject({ outcome: 'failed', error: { code: 'torn_final_line' } });
    // The real pass says the same of both.
    const real = byId((await runJson(['watch', '--once'], home.env)).json);
    expect(real[DEMO_CLAUDE_ID]).toMatchObject({ outcome: 'compacted', reused: true, fork: { path: applied.json.receipt.path } });
    expect(real[DEMO_CODEX_ID]).toMatchObject({ outcome: 'failed', error: { code: 'torn_final_line' } });
    expect(hashes([home.claudeHome, home.codexHome])).toEqual({ ...files, ...hashes([home.claudeHome]) });
  });

  it('a session under its reported trigger is not read; with adaptive on it must be, and its damage is that session\'s failure alone', async () => {
    home = demoHome(config('[provider.claude_code]\ntrigger_tokens = 70000\n'));
    // A NUL byte near the start: any parse refuses the file, the tail read discovery does never sees it.
    const bytes = readFileSync(home.claudeSession);
    bytes[100] = 0;
    writeFileSync(home.claudeSession, bytes);
    utimesSync(home.claudeSession, new Date(Date.now() - 3600_000), new Date(Date.now() - 3600_000));
    const under = await runJson(['watch', '--once'], home.env);
    expect(under.code).toBe(0);
    expect(byId(under.json)[DEMO_CLAUDE_ID]).toMatchObject({ outcome: 'below_trigger', context_tokens: 45513, effective_trigger_tokens: 70000 });
    // The Codex session is over its trigger of 20,000 and is compacted beside it.
    expect(byId(under.json)[DEMO_CODEX_ID]).toMatchObject({ outcome: 'compacted' });

    writeFileSync(join(home.configHome, 'gobstopper', 'config.toml'), config('adaptive = true\n[provider.claude_code]\ntrigger_tokens = 70000\n'));
    const adaptive = await runJson(['watch', '--once'], home.env);
    expect(adaptive.code).toBe(0);
    const failed = byId(adaptive.json)[DEMO_CLAUDE_ID];
    expect(failed.outcome).toBe('failed');
    expect(failed.error.message).toContain('NUL');
    // A failure stands until the file changes: the next pass does not read it again.
    const again = await runJson(['watch', '--once'], home.env);
    expect(byId(again.json)[DEMO_CLAUDE_ID]).toBeUndefined();
    expect(again.json.skipped.settled).toBeGreaterThanOrEqual(1);
  });

  it('a trigger past where a client compacts by itself is said to never fire, as with the default one', async () => {
    home = demoHome('[policy]\nstrategy = "compacted"\n');
    const once = await runJson(['watch', '--once'], home.env);
    expect(once.code, once.stderr).toBe(0);
    expect(validateWatchPass(once.json)).toBe(true);
    expect(once.json.decisions.map((d: any) => d.outcome)).toEqual(['below_trigger', 'below_trigger']);
    expect(once.json.warnings).toEqual([
      expect.stringContaining('the trigger 250,000 is at or above where codex compacts by itself (~244,800 of a 272,000-token window), so it never fires for its session'),
      expect.stringContaining('the trigger 250,000 is at or above where claude_code compacts by itself (~180,000 of a 200,000-token window), so it never fires for its session'),
    ]);
    const text = await runCli(['watch', '--once'], home.env);
    expect(text.stderr).toContain('lower trigger_tokens in [policy] or [provider.claude_code]');
    // A trigger under that point, or adaptive tuning, which caps it per session, says nothing.
    writeFileSync(join(home.configHome, 'gobstopper', 'config.toml'), '[policy]\nstrategy = "compacted"\ntrigger_tokens = 150000\n');
    expect((await runJson(['watch', '--once', '--dry-run'], home.env)).json.warnings).toBeUndefined();
    writeFileSync(join(home.configHome, 'gobstopper', 'config.toml'), '[policy]\nstrategy = "compacted"\nadaptive = true\n');
    expect((await runJson(['watch', '--once', '--dry-run'], home.env)).json.warnings).toBeUndefined();
  });

  it('client homes that do not exist are named in the first pass that finds nothing, not every pass', async () => {
    home = demoHome();
    const missing = { CLAUDE_CONFIG_DIR: join(home.root, 'no-claude'), CODEX_HOME: join(home.root, 'no-codex') };
    const said = `no sessions to watch: claude_code looked in ${join(missing.CLAUDE_CONFIG_DIR, 'projects')}, which does not exist; codex looked in`;
    const text = await runCli(['watch', '--once'], { ...home.env, ...missing });
    expect(text.code).toBe(0);
    expect(text.stderr).toContain(`warning: ${said}`);
    const passes = await loopPasses({ ...home, env: { ...home.env, ...missing } }, 2);
    expect(passes[0].warnings).toEqual([expect.stringContaining(said)]);
    expect(passes.slice(1).map((p) => p.warnings)).toEqual(passes.slice(1).map(() => undefined));
    // Homes that are there say nothing of the kind.
    expect((await runJson(['watch', '--once', '--dry-run'], home.env)).json.warnings ?? []).not.toEqual(expect.arrayContaining([expect.stringContaining('no sessions to watch')]));
  });

  it('a discovery window that no session was updated in is named once, with what follows older sessions', async () => {
    home = demoHome();
    const tenDaysAgo = new Date(Date.now() - 10 * 86_400_000);
    utimesSync(home.claudeSession, tenDaysAgo, tenDaysAgo);
    utimesSync(home.codexSession, tenDaysAgo, tenDaysAgo);
    const text = await runCli(['watch', '--once', '--dry-run'], home.env);
    expect(text.code).toBe(0);
    expect(text.stderr).toContain('warning: no sessions to watch: none was updated in the last 7 days (--all or --max-age');
    const passes = await loopPasses(home, 2);
    expect(passes.map((p) => p.sessions)).toEqual([0, 0]);
    expect(passes[0].warnings).toEqual([expect.stringContaining('none was updated in the last 7 days')]);
    expect(passes[1].warnings).toBeUndefined();
    // With --all both are followed, and nothing of the kind is said.
    const all = await runJson(['watch', '--once', '--dry-run', '--all'], home.env);
    expect(all.json.sessions).toBe(2);
    expect(all.json.warnings ?? []).not.toEqual(expect.arrayContaining([expect.stringContaining('no sessions to watch')]));
  });

  it('a receipt that cannot be read is named by detect, and by watch once while it lasts; its fork is then listed as a session of its own', async () => {
    home = demoHome();
    const applied = await runJson(['apply', DEMO_CLAUDE_ID], home.env);
    expect(applied.code, applied.stderr).toBe(0);
    const { receipt } = applied.json;
    const receiptFile = join(home.dataHome, 'gobstopper', 'vault', 'operations', `${receipt.operation}.json`);
    const said = (text: string) => text.includes(`${receiptFile}: receipt is not JSON`) && text.includes('is listed as a session of its own');
    // Known, the fork is gobstopper's own: not live, counted at its projection, and nothing is said.
    const clean = await runJson(['detect', '--provider', 'claude_code'], home.env);
    expect(clean.json.find((r: any) => r.session_id === receipt.output_session_id)).toMatchObject({ active: false, projected_context_tokens: expect.any(Number) });
    expect(clean.stderr).toBe('');
    writeFileSync(receiptFile, 'not json', { mode: 0o600 });

    const listed = await runJson(['detect', '--provider', 'claude_code'], home.env);
    expect(listed.code).toBe(0);
    expect(said(listed.stderr)).toBe(true);
    const fork = listed.json.find((r: any) => r.session_id === receipt.output_session_id);
    expect(fork).toMatchObject({ active: true, context_basis: 'reported' });
    expect(fork).not.toHaveProperty('published');
    expect(fork).not.toHaveProperty('projected_context_tokens');
    const text = await runCli(['detect', '--provider', 'claude_code'], home.env);
    expect(said(text.stderr)).toBe(true);
    expect(text.stdout).not.toContain('projected');

    await expectSaidOnceWhileItLasts(home, said);
  });

  it('a transcript folder it cannot read is named once while it lasts, as detect names it: its sessions are never watched', async () => {
    home = demoHome(config());
    const projects = join(home.claudeDir, '..');
    // A folder whose name is not UTF-8, which no provider can open.
    const folder = Buffer.concat([Buffer.from(`${projects}/-caf`), Buffer.from([0xe9])]);
    mkdirSync(folder);
    writeFileSync(Buffer.concat([folder, Buffer.from('/0badf01d-0000-4000-8000-000000000001.jsonl')]), readFileSync(home.claudeSession));
    const said = (text: string) => text.startsWith('1 folder could not be read (') && text.endsWith('; not watched');
    await expectSaidOnceWhileItLasts(home, said);
    const once = await runCli(['watch', '--once', '--dry-run'], home.env);
    expect(once.stderr).toMatch(/^warning: 1 folder could not be read \(.*-caf\\xe9\/: folder not searched: its name is not valid UTF-8.*; not watched$/m);
  });

  it('a live session over its trigger is named once and left to its client', async () => {
    home = demoHome();
    const now = new Date();
    utimesSync(home.claudeSession, now, now);
    const first = await runJson(['watch', '--once'], home.env);
    expect(byId(first.json)[DEMO_CLAUDE_ID]).toMatchObject({ outcome: 'live_over_trigger', control: '/compact or relaunch --autocompact' });
    expect(byId(first.json)[DEMO_CODEX_ID]).toMatchObject({ outcome: 'compacted' });
    const text = await runCli(['watch', '--once'], home.env);
    expect(text.stdout).not.toContain('is live at');
    expect(text.stdout).toContain('1 live');
    expect(listFiles(home.claudeHome)).toHaveLength(1);
    // A live Codex session is told what its prompt takes, not only its app-server's method.
    const now2 = new Date();
    utimesSync(home.codexSession, now2, now2);
    const codex = await runCli(['watch', '--once', '--provider', 'codex'], home.env);
    expect(codex.stdout).toContain(`codex ${DEMO_CODEX_ID} is live at 41,030 tokens, over its trigger of 20,000: it will be compacted once idle (its client can compact now: /compact at the Codex prompt, or thread/compact/start over its app-server)`);
  });

  it('a session modified ahead of the clock, live until then, is named once while it lasts, as detect names it', async () => {
    home = demoHome();
    const ahead = new Date(Date.now() + 2 * 3600_000);
    utimesSync(home.claudeSession, ahead, ahead);
    const once = await runCli(['watch', '--once'], home.env);
    expect(once.code, once.stderr).toBe(0);
    expect(once.stderr).toContain(`warning: 1 session modified later than this machine's clock says it is now (${home.claudeSession}, 2h ahead): live until then, so not compacted`);
    await expectSaidOnceWhileItLasts(home, (w) => w.includes('modified later than'));
  });

  it('says under a fork\'s resume command what apply says there: an archived Codex source makes an archived fork', async () => {
    const archivedHome = () => {
      const h = demoHome();
      mkdirSync(join(h.codexHome, 'archived_sessions'));
      renameSync(h.codexSession, join(h.codexHome, 'archived_sessions', basename(h.codexSession)));
      return h;
    };
    home = archivedHome();
    const pass = await runJson(['watch', '--once', '--provider', 'codex'], home.env);
    expect(validateWatchPass(pass.json)).toBe(true);
    const fork = byId(pass.json)[DEMO_CODEX_ID].fork;
    expect(fork.resume_note).toContain('the source is archived, and so is the fork');
    home.cleanup();

    home = archivedHome();
    const lines = (await runCli(['watch', '--once', '--provider', 'codex'], home.env)).stdout.split('\n');
    const resume = lines.findIndex((l) => l.startsWith('  resume: codex resume '));
    expect(lines[resume + 1]).toBe(`  note: ${fork.resume_note}`);
  });

  it('on an 80-column terminal its sentences wrap, while a fork\'s path and resume command stay whole', async () => {
    home = demoHome();
    // Live, the Codex session is told its client's controls: the longest sentence a pass prints.
    const now = new Date();
    utimesSync(home.codexSession, now, now);
    const narrow = { extraEnv: { COLUMNS: '80' } };
    // A dry run decides alike twice; only the clock time that starts the pass's line differs.
    const words = (out: string) => out.replace(/^\d\d:\d\d:\d\d /m, '').replace(/\s+/g, ' ');
    const piped = await runCli(['watch', '--once', '--dry-run'], home.env);
    expect(piped.stdout).toMatch(/^would compact claude_code .* tokens \(compacted\)$/m);
    const wrapped = await runCli(['watch', '--once', '--dry-run'], home.env, narrow);
    expect(wrapped.code, wrapped.stderr).toBe(0);
    for (const line of wrapped.stdout.trimEnd().split('\n')) expect([...line].length, line).toBeLessThanOrEqual(80);
    expect(words(wrapped.stdout)).toBe(words(piped.stdout));

    const applied = await runCli(['watch', '--once'], home.env, narrow);
    expect(applied.code, applied.stderr).toBe(0);
    const lines = applied.stdout.trimEnd().split('\n');
    const fork = lines.find((l) => l.startsWith('  fork: '))!.slice('  fork: '.length);
    expect(existsSync(fork)).toBe(true);
    expect(lines).toContain(`  resume: claude --resume ${fork}`);
    for (const line of lines.filter((l) => !/^  (fork|resume): /.test(l))) expect([...line].length, line).toBeLessThanOrEqual(80);
  });

  it('a compaction of an unchanged file stands past the day: no second fork under a new policy, no deleted fork published again', async () => {
    home = demoHome();
    const first = await runJson(['watch', '--once', '--provider', 'codex'], home.env);
    const fork = byId(first.json)[DEMO_CODEX_ID].fork.path;
    rmSync(fork);
    writeFileSync(join(home.configHome, 'gobstopper', 'config.toml'), config().replace('"compacted"', '"elide"'));
    // Two days on: the decision and the compaction are older than a day.
    const path = join(home.dataHome, 'gobstopper', 'watch-state-codex.json');
    const state = JSON.parse(readFileSync(path, 'utf8'));
    for (const e of Object.values<any>(state.entries)) {
      e.decided_at -= 2 * 86_400;
      e.applied_at -= 2 * 86_400;
    }
    writeFileSync(path, JSON.stringify(state));
    const later = await runJson(['watch', '--once', '--provider', 'codex'], home.env);
    expect(later.code, later.stderr).toBe(0);
    expect(later.json.decisions).toEqual([]);
    expect(later.json.skipped.settled).toBe(1);
    expect(listFiles(home.codexDir)).toEqual([home.codexSession]);
  });

  it('a session compacted less than min_interval_secs ago waits; at 0 it is looked at again', async () => {
    home = demoHome();
    expect((await runJson(['watch', '--once'], home.env)).code).toBe(0);
    // The file is touched (same bytes): no longer the state the watch decided on.
    const later = new Date(Date.now() - 1800_000);
    utimesSync(home.claudeSession, later, later);
    const waiting = await runJson(['watch', '--once'], home.env);
    expect(waiting.json.skipped.rate_limited).toBe(1);
    writeFileSync(join(home.configHome, 'gobstopper', 'config.toml'), config('min_interval_secs = 0\n'));
    const again = await runJson(['watch', '--once'], home.env);
    // Same bytes, same plan: the fork already published is found, not written twice.
    expect(byId(again.json)[DEMO_CLAUDE_ID]).toMatchObject({ outcome: 'compacted', reused: true });
  });

  it('min_interval_secs counts from a compaction any command made: apply, or a watch of other providers', async () => {
    home = demoHome();
    expect((await runJson(['apply', DEMO_CLAUDE_ID], home.env)).code).toBe(0);
    expect((await runJson(['watch', '--once', '--provider', 'codex'], home.env)).code).toBe(0);
    // Both compacted 250 s ago, as far as the events log says, by commands this watch's state never
    // saw, and written to by their clients 200 s ago (idle since): after the compaction, inside the interval.
    const log = join(home.dataHome, 'gobstopper', 'events.jsonl');
    const events = readFileSync(log, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l));
    expect(events).toHaveLength(2);
    writeFileSync(log, events.map((e) => JSON.stringify({ ...e, ts: e.ts - 250 }) + '\n').join(''));
    const written = new Date(Date.now() - 200_000);
    utimesSync(home.claudeSession, written, written);
    utimesSync(home.codexSession, written, written);
    const files = hashes([home.claudeHome, home.codexHome]);
    const waiting = await runJson(['watch', '--once'], home.env);
    expect(waiting.code, waiting.stderr).toBe(0);
    expect(waiting.json.skipped.rate_limited).toBe(2);
    expect(hashes([home.claudeHome, home.codexHome])).toEqual(files);
  });

  it('a failure of the vault or the disk is tried again next pass, once mended, though the session did not change', async () => {
    home = demoHome();
    const vault = join(home.dataHome, 'gobstopper', 'vault');
    mkdirSync(vault, { recursive: true, mode: 0o700 });
    chmodSync(join(home.dataHome, 'gobstopper'), 0o700);
    // A file where the vault keeps its chunks: a vault to mend, not a session that cannot be compacted.
    writeFileSync(join(vault, 'chunks'), '');
    const blocked = await runJson(['watch', '--once'], home.env);
    expect(blocked.code).toBe(0);
    expect(byId(blocked.json)[DEMO_CLAUDE_ID]).toMatchObject({ outcome: 'failed', error: { code: 'vault_insecure' } });
    rmSync(join(vault, 'chunks'));

    // A file-size limit stops the chunk writes: the errno is the code, and the message says what to do.
    const limited = await new Promise<{ code: number | null; stdout: string }>((resolve, reject) => {
      const child = spawn('bash', ['-c', `trap '' XFSZ; ulimit -f 8; exec "${process.execPath}" "${binPath}" watch --once --json`], { cwd: home!.env.HOME, env: { PATH: process.env.PATH ?? '', ...home!.env }, stdio: ['ignore', 'pipe', 'ignore'] });
      let stdout = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
      child.on('error', reject).on('close', (code) => resolve({ code, stdout }));
    });
    expect(limited.code).toBe(0);
    const efbig = byId(JSON.parse(limited.stdout))[DEMO_CLAUDE_ID];
    expect(efbig).toMatchObject({ outcome: 'failed', error: { code: 'efbig' } });
    expect(efbig.error.message).toMatch(/^write failed on .*: the file would grow past the largest file this process may write \(ulimit -f\).* \(EFBIG\)$/);

    const mended = await runJson(['watch', '--once'], home.env);
    expect(mended.code).toBe(0);
    for (const id of [DEMO_CLAUDE_ID, DEMO_CODEX_ID]) expect(byId(mended.json)[id]).toMatchObject({ outcome: 'compacted', reused: false });
    expect(mended.json.skipped.settled).toBe(0);
  });

  it('without --json, a failure that comes back every pass is said once while it lasts, and a pass that ends a spell of failed passes says so', async () => {
    home = demoHome();
    const vault = join(home.dataHome, 'gobstopper', 'vault');
    mkdirSync(vault, { recursive: true, mode: 0o700 });
    chmodSync(join(home.dataHome, 'gobstopper'), 0o700);
    writeFileSync(join(vault, 'chunks'), '');
    const child = spawn(process.execPath, [binPath, 'watch', '--interval', '1'], { env: { PATH: process.env.PATH ?? '', ...home.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    const until = async (check: () => boolean) => {
      const deadline = Date.now() + 60_000;
      while (!check() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    };
    // Each pass saves the state anew: three saves are three passes that met the same vault.
    const saves = new Set<number>();
    await until(() => {
      if (existsSync(statePath(home!))) saves.add(statSync(statePath(home!)).ino);
      return saves.size >= 3;
    });
    rmSync(join(vault, 'chunks'));
    await until(() => out.includes(`compacted claude_code ${DEMO_CLAUDE_ID}`));
    const file = join(home.configHome, 'gobstopper', 'config.toml');
    writeFileSync(file, '[policy\n');
    await new Promise((r) => setTimeout(r, 4000));
    writeFileSync(file, config());
    await until(() => /pass \d+ failed[\s\S]*\d\d:\d\d:\d\d pass \d+:/.test(out));
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    expect(out.split('\n').filter((l) => l.startsWith(`failed claude_code ${DEMO_CLAUDE_ID}`))).toHaveLength(1);
    const failed = out.split('\n').filter((l) => /^warning: pass \d+ failed/.test(l));
    expect(failed).toHaveLength(1);
    const firstFailed = Number(/pass (\d+) failed/.exec(failed[0]!)![1]);
    const ran = [...out.matchAll(/\d\d:\d\d:\d\d pass (\d+):/g)].map((m) => Number(m[1])).filter((n) => n > firstFailed);
    // Passes failed in between, unsaid, and the pass that ran again said so although it decided nothing.
    expect(ran[0]! - firstFailed).toBeGreaterThanOrEqual(2);
  }, 90_000);

  it('a damaged state file is reported and replaced, not a reason to stop', async () => {
    home = demoHome();
    expect((await runJson(['watch', '--once'], home.env)).code).toBe(0);
    writeFileSync(statePath(home), '{"schema":');
    // A dry run says so and leaves the file as it is.
    const dry = await runCli(['watch', '--once', '--dry-run'], home.env);
    expect(dry.stderr).toContain('is not valid JSON; a watch that is not a dry run rewrites it');
    expect(readFileSync(statePath(home), 'utf8')).toBe('{"schema":');
    const r = await runCli(['watch', '--once'], home.env);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('is not valid JSON');
    // Without its memory the watch finds the forks it already published, and counts them as such.
    expect(r.stdout).toContain('already compacted');
    expect(r.stdout).toMatch(/pass 1: \d+ sessions?: 2 already compacted/);
    expect(r.stdout).not.toMatch(/: \d+ compacted/);
    expect(JSON.parse(readFileSync(statePath(home), 'utf8')).schema).toBe('gobstopper/watch-state-v1');
  });

  it('keeps what apply warned about with the decision: a fork that keeps its source\'s verify errors says so', async () => {
    home = demoHome();
    // A line no client can read, in the middle: the fork keeps it, and may not resume either.
    const lines = readFileSync(home.claudeSession, 'utf8').split('\n');
    lines.splice(60, 0, 'this is {not json');
    writeFileSync(home.claudeSession, lines.join('\n'));
    const hourAgo = new Date(Date.now() - 3600_000);
    utimesSync(home.claudeSession, hourAgo, hourAgo);
    const r = await runJson(['watch', '--once', '--provider', 'claude'], home.env);
    expect(r.code, r.stderr).toBe(0);
    expect(validateWatchPass(r.json)).toBe(true);
    const decided = byId(r.json)[DEMO_CLAUDE_ID];
    expect(decided).toMatchObject({ outcome: 'compacted' });
    expect(decided.warnings).toEqual([expect.stringContaining('the source already had 1 verify error(s) (invalid_json) and the fork keeps them')]);
  });

  it('warns of a session table keyed by a prefix once, in the first pass that finds it, not every pass', async () => {
    const prefix = DEMO_CODEX_ID.slice(0, 8);
    const said = `[sessions."${prefix}"] is not applied: a session table is keyed by the full session id (${DEMO_CODEX_ID})`;
    // Under this trigger no session is planned, so no plan warns of the table either.
    home = demoHome(config(`[sessions."${prefix}"]\ntrigger_tokens = 30000\n`).replace('20000', '200000'));
    const passes = await loopPasses(home, 3);
    // 200,000 is past where Claude Code compacts by itself in its 200,000-token window: said once as well.
    const neverFires = `the trigger 200,000 is at or above where claude_code compacts by itself (~180,000 of a 200,000-token window), so it never fires for its session ${DEMO_CLAUDE_ID}; lower trigger_tokens in [policy] or [provider.claude_code] (gobstopper explain ${DEMO_CLAUDE_ID} says why)`;
    expect(passes[0].warnings).toEqual([neverFires, said]);
    expect(passes.slice(1).map((p) => p.warnings)).toEqual(passes.slice(1).map(() => undefined));
    // A person sees it on stderr, and once: the plan of the session, which warns of it too, does not say it again under the decision.
    writeFileSync(join(home.configHome, 'gobstopper', 'config.toml'), config(`[sessions."${prefix}"]\ntrigger_tokens = 30000\n`));
    const dry = await runCli(['watch', '--once', '--dry-run', '--provider', 'codex'], home.env);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain(`would compact codex ${DEMO_CODEX_ID}`);
    expect(dry.stderr.split('\n').filter((l) => l.includes(`[sessions."${prefix}"]`))).toEqual([`warning: ${said}`]);
    expect(dry.stdout).not.toContain('warning:');
  });

  it('a directory where the state is kept is refused before a pass publishes anything', async () => {
    home = demoHome();
    mkdirSync(statePath(home), { recursive: true, mode: 0o700 });
    const files = hashes([home.claudeHome, home.codexHome]);
    for (const args of [['--once'], ['--once', '--dry-run']]) {
      const r = await runJson(['watch', ...args], home.env);
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.json.error).toMatchObject({ code: 'watch_state_blocked' });
      expect(r.json.error.message).toContain('is a directory where the watch keeps its state; move it aside');
    }
    // Saved only after the pass, the state could not replace the directory: the forks were
    // published and the pass that published them went unreported.
    expect(hashes([home.claudeHome, home.codexHome])).toEqual(files);
  });

  it('keeps watching pass after pass, one JSON line each; a second watch is refused; Ctrl-C ends it with 130', async () => {
    home = demoHome();
    const loop = watchLoop(home);
    await loop.waitFor(() => loop.lines().length >= 2);
    const second = await runJson(['watch', '--once'], home.env);
    loop.child.kill('SIGINT');
    expect(await loop.exited).toBe(130);
    const lines = loop.lines();
    expect(lines.length).toBeGreaterThanOrEqual(3);
    expect(lines.slice(0, 2).map((p) => p.pass)).toEqual([1, 2]);
    for (const pass of lines.slice(0, -1)) expect(validateWatchPass(pass)).toBe(true);
    expect(lines[0].decisions.filter((d: any) => d.outcome === 'compacted')).toHaveLength(2);
    expect(lines.at(-1)).toMatchObject({ ok: false, error: { code: 'interrupted' } });
    // The forks of earlier passes were finished: the interrupt has nothing of theirs to report.
    expect(lines.at(-1).error.message).toBe('interrupted by SIGINT');
    expect(second.code).toBe(1);
    expect(second.json.error.code).toBe('watch_running');
    // The lock goes with the watch.
    expect((await runJson(['watch', '--once', '--dry-run'], home.env)).code).toBe(0);
    expect((await runJson(['watch', '--once'], home.env)).code).toBe(0);
  });

  it('stops once whatever reads its output has gone, and lets go of its lock', async () => {
    home = demoHome();
    const loop = watchLoop(home);
    await loop.waitFor(() => loop.output().includes('\n'));
    // As `watch --json | head -1` does once it has its line.
    loop.child.stdout.destroy();
    const stopped = await Promise.race([loop.exited, new Promise<'running'>((r) => setTimeout(() => r('running'), 15_000))]);
    if (stopped === 'running') loop.child.kill('SIGKILL');
    expect(stopped).toBe(1);
    for (const provider of ['claude_code', 'codex']) expect(existsSync(lockPath(home, provider))).toBe(false);
  }, 90_000);

  it('refuses bad flags as usage errors', async () => {
    home = demoHome();
    for (const args of [['--interval', '0'], ['--interval', 'soon'], ['--max-age', '60', '--all'], ['--max-age', '99999999999999999999999'], ['--provider', 'nope'], ['--strategy', 'nope'], ['--preset', 'nope']]) {
      const r = await runJson(['watch', '--once', ...args], home.env);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.json.ok).toBe(false);
    }
    expect(existsSync(statePath(home))).toBe(false);
  });

  it('a bad flag leaves no file behind, and a provider is never a path', async () => {
    home = demoHome();
    // The lock's file name is made from the providers named: "x/../../../../escaped/p" led out of
    // the data directory, and the directories on the way were made before the name was refused.
    for (const args of [['--provider', 'x/../../../../escaped/p'], ['--provider', 'nope'], ['--strategy', 'nope'], ['--preset', 'nope'], ['--config', join(home.root, 'missing.toml')]]) {
      const r = await runJson(['watch', '--once', ...args], home.env);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.json.ok).toBe(false);
    }
    expect(existsSync(join(home.root, 'escaped'))).toBe(false);
    expect(existsSync(join(home.dataHome, 'gobstopper'))).toBe(false);
  });

  it('--rehearse needs the client of every watched provider before it starts, and writes nothing without one', async () => {
    home = demoHome();
    // No client anywhere: PATH without them, no GOBSTOPPER_*_BIN.
    const env = { ...home.env, PATH: '/usr/bin:/bin', GOBSTOPPER_CLAUDE_BIN: '', GOBSTOPPER_CODEX_BIN: '' };
    const missing = await runJson(['watch', '--once', '--rehearse', '--claude-bin', join(home.root, 'no-claude')], env);
    expect(missing.code).toBe(1);
    expect(missing.json.error).toMatchObject({ code: 'client_missing', details: { provider: 'claude_code' } });
    expect(missing.json.error.message).toMatch(/^watch --rehearse resumes claude_code forks with their client: claude client not found at .*no-claude.*, or watch only codex \(--provider\)$/);
    // A claude that is there leaves codex's missing client to name.
    const codexMissing = await runJson(['watch', '--once', '--rehearse', '--claude-bin', process.execPath], env);
    expect(codexMissing.code).toBe(1);
    expect(codexMissing.json.error.message).toMatch(/codex client not found on PATH.*, or watch only claude_code \(--provider\)$/);
    expect(existsSync(join(home.dataHome, 'gobstopper'))).toBe(false);
    for (const args of [['--rehearse', '--dry-run'], ['--claude-bin', process.execPath]]) {
      const r = await runJson(['watch', '--once', ...args], env);
      expect(r.code, args.join(' ')).toBe(2);
    }
  });

  it('a config table naming a strategy nothing serves fails its own sessions, not the pass', async () => {
    home = demoHome(config('[provider.codex]\nstrategy = "nope"\n'));
    const r = await runJson(['watch', '--once'], home.env);
    expect(r.code).toBe(0);
    expect(byId(r.json)[DEMO_CODEX_ID]).toMatchObject({ outcome: 'failed', error: { code: 'unknown_strategy' } });
    expect(byId(r.json)[DEMO_CODEX_ID].error.message).toContain('[provider.codex]');
    expect(byId(r.json)[DEMO_CLAUDE_ID]).toMatchObject({ outcome: 'compacted' });
    // Fixed, the failed session is decided again at once: its decision was made under the old policy.
    writeFileSync(join(home.configHome, 'gobstopper', 'config.toml'), config());
    const fixed = await runJson(['watch', '--once'], home.env);
    expect(byId(fixed.json)[DEMO_CODEX_ID]).toMatchObject({ outcome: 'compacted' });
  });

  it('a session failed for a strategy nothing serves is tried again once a bundle serving it is added', async () => {
    home = demoHome(config('[provider.codex]\nstrategy = "later_strategy"\n'));
    const unserved = await runJson(['watch', '--once', '--provider', 'codex'], home.env);
    expect(byId(unserved.json)[DEMO_CODEX_ID]).toMatchObject({ outcome: 'failed', error: { code: 'unknown_strategy' } });
    const bundle = fixturePluginBundle(join(home.root, 'later-bundle'), 'misbehaving-strategy.mjs', { args: ['ok', '', 'later-fixture', 'later_strategy'], id: 'later-fixture', provides: { strategies: ['later_strategy'] } });
    expect((await runCli(['plugin', 'add', bundle], home.env)).code).toBe(0);
    const served = await runJson(['watch', '--once', '--provider', 'codex'], home.env);
    expect(byId(served.json)[DEMO_CODEX_ID]).toMatchObject({ outcome: 'no_plan' });
    // Decided under that bundle, it is settled again.
    expect((await runJson(['watch', '--once', '--provider', 'codex'], home.env)).json.skipped.settled).toBe(1);
  });

  it('a session table that breaks a bound fails that session alone: the pass goes on and reports every fork it made', async () => {
    home = demoHome(config(`[sessions."${DEMO_CLAUDE_ID}"]\nfloor_tokens = 50000\n`));
    const r = await runJson(['watch', '--once'], home.env);
    expect(r.code, r.stderr).toBe(0);
    expect(validateWatchPass(r.json)).toBe(true);
    const claude = byId(r.json)[DEMO_CLAUDE_ID];
    expect(claude).toMatchObject({ outcome: 'failed', error: { code: 'invalid_policy' } });
    expect(claude.error.message).toContain(`floor_tokens: [sessions."${DEMO_CLAUDE_ID}"]`);
    // The other session was compacted in the same pass, and its fork is reported.
    expect(byId(r.json)[DEMO_CODEX_ID]).toMatchObject({ outcome: 'compacted' });
    expect(existsSync(byId(r.json)[DEMO_CODEX_ID].fork.path)).toBe(true);
    // Settled as any failure is, until the file or the table changes.
    const again = await runJson(['watch', '--once'], home.env);
    expect(again.json.decisions).toEqual([]);
    expect(again.json.skipped.settled).toBe(2);
    writeFileSync(join(home.configHome, 'gobstopper', 'config.toml'), config(`[sessions."${DEMO_CLAUDE_ID}"]\nfloor_tokens = 9000\n`));
    const fixed = await runJson(['watch', '--once'], home.env);
    expect(byId(fixed.json)[DEMO_CLAUDE_ID]).toMatchObject({ outcome: 'compacted' });
  });

  it('[policy] bounds that no provider keeps are refused before the watch writes anything', async () => {
    home = demoHome('[policy]\nstrategy = "compacted"\ntrigger_tokens = 20000\nfloor_tokens = 30000\n');
    const human = await runCli(['watch', '--once'], home.env);
    expect(human.code).toBe(1);
    expect(human.stderr).toMatch(/^gobstopper: invalid policy bounds: floor_tokens \(30000\) must be below trigger_tokens \(20000\) .*\n$/);
    const json = await runJson(['watch', '--once'], home.env);
    expect(json.json.error.code).toBe('invalid_policy');
    expect(existsSync(join(home.dataHome, 'gobstopper'))).toBe(false);
  });

  it('a session in a directory whose name holds a control character is compacted like any other, its path escaped on the terminal', async () => {
    home = demoHome();
    const moved = moveDemoClaudeSession(home, '-home-dev-\u001b[31m-red');
    const dry = await runJson(['watch', '--once', '--dry-run', '--provider', 'claude_code'], home.env);
    expect(dry.code, dry.stderr).toBe(0);
    expect(byId(dry.json)[DEMO_CLAUDE_ID]).toMatchObject({ outcome: 'would_compact', path: moved });
    const human = await runCli(['watch', '--once', '--provider', 'claude_code'], home.env);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toMatch(new RegExp(`^compacted claude_code ${DEMO_CLAUDE_ID}: `, 'm'));
    // The fork beside its source, its path shown with the escape written out, never sent raw.
    expect(human.stdout).toContain('-home-dev-\\u001b[31m-red/');
    expect(human.stdout).not.toContain('\u001b');
  });

  it('strategy_params a table sets are checked as plan checks them, under the trigger too, and fail only that table\'s sessions', async () => {
    // The codex session is far under this trigger: unchecked, it was passed over as below_trigger.
    home = demoHome(config('[provider.codex]\nstrategy = "auto"\ntrigger_tokens = 5000000\nstrategy_params = { candidates = ["elide", "elidee"] }\n'));
    const r = await runJson(['watch', '--once', '--dry-run'], home.env);
    expect(r.code, r.stderr).toBe(0);
    expect(validateWatchPass(r.json)).toBe(true);
    const codex = byId(r.json)[DEMO_CODEX_ID];
    expect(codex).toMatchObject({ outcome: 'failed', error: { code: 'unknown_strategy' } });
    expect(codex.error.message).toMatch(/^unknown strategy 'elidee' in strategy_params\.candidates\[1\] of auto \(did you mean elide\?\); known: .* \(set by strategy_params: \[provider\.codex\] in .*config\.toml\)$/);
    expect(byId(r.json)[DEMO_CLAUDE_ID]).toMatchObject({ outcome: 'would_compact' });
    // The params schema itself, as a person reads it.
    writeFileSync(join(home.configHome, 'gobstopper', 'config.toml'), config('[provider.codex]\nstrategy = "auto"\ntrigger_tokens = 5000000\nstrategy_params = { candidates = "elide" }\n'));
    const human = await runCli(['watch', '--once', '--dry-run', '--provider', 'codex'], home.env);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toMatch(new RegExp(`^failed codex ${DEMO_CODEX_ID}: strategy_params for auto do not match the params_schema it declares at /candidates: must be array \\(set by strategy_params: \\[provider\\.codex\\] in .*config\\.toml\\) \\[invalid_strategy_params\\]$`, 'm'));
  });

  it('a pass that breaks after the first is reported and the watch goes on', async () => {
    home = demoHome(config().replace('20000', '200000'));
    const { child, exited, lines, waitFor } = watchLoop(home);
    await waitFor(() => lines().length >= 1);
    writeFileSync(join(home.configHome, 'gobstopper', 'config.toml'), '[policy]\ntrigger_tokens = "lots"\n');
    await waitFor(() => lines().some((l) => l.ok === false));
    writeFileSync(join(home.configHome, 'gobstopper', 'config.toml'), config());
    await waitFor(() => lines().some((l) => l.decisions?.some((d: any) => d.outcome === 'compacted')));
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    const all = lines();
    const broken = all.find((l) => l.ok === false && l.error.code !== 'interrupted');
    expect(broken.error.details.pass).toBeGreaterThan(1);
    expect(broken.error.message).toContain('trigger_tokens');
    expect(all.filter((l) => l.decisions?.some((d: any) => d.outcome === 'compacted'))).toHaveLength(1);
  });

  it('a file a client writes to while the watch decides on it is decided on again, not settled', async () => {
    home = demoHome(config().replace('"compacted"', '"slow_strategy"'));
    const log = join(home.root, 'slow-strategy.log');
    const bundle = fixturePluginBundle(join(home.root, 'slow-bundle'), 'misbehaving-strategy.mjs', { args: ['slow', log, 'slow-fixture', 'slow_strategy'], id: 'slow-fixture', provides: { strategies: ['slow_strategy'] } });
    expect((await runCli(['plugin', 'add', bundle], home.env)).code).toBe(0);
    const running = runJson(['watch', '--once', '--provider', 'claude_code'], home.env);
    // While the strategy takes its time (asked, not yet answered), the client touches the file (idle
    // again, but not the file decided on). Waiting for the question, not for a fixed time, keeps a
    // slow machine from touching it before the watch read it.
    while (!(existsSync(log) && readFileSync(log, 'utf8').includes('propose\n'))) await new Promise((r) => setTimeout(r, 50));
    const later = new Date(Date.now() - 1200_000);
    utimesSync(home.claudeSession, later, later);
    const first = await running;
    expect(byId(first.json)[DEMO_CLAUDE_ID]).toMatchObject({ outcome: 'no_plan' });
    const second = await runJson(['watch', '--once', '--provider', 'claude_code'], home.env);
    expect(byId(second.json)[DEMO_CLAUDE_ID]).toMatchObject({ outcome: 'no_plan' });
    const third = await runJson(['watch', '--once', '--provider', 'claude_code'], home.env);
    expect(third.json.skipped.settled).toBe(1);
  }, 60_000);

  it('a session its client takes up while the pass runs is left to it as live, not failed with apply\'s advice to force it', async () => {
    // The smaller Codex session waits on a slow strategy; meanwhile the Claude session's client writes to it.
    home = demoHome(config('[provider.codex]\nstrategy = "slow_strategy"\n'));
    const log = join(home.root, 'slow-strategy.log');
    const bundle = fixturePluginBundle(join(home.root, 'slow-bundle'), 'misbehaving-strategy.mjs', { args: ['slow', log, 'slow-fixture', 'slow_strategy'], id: 'slow-fixture', provides: { strategies: ['slow_strategy'] } });
    expect((await runCli(['plugin', 'add', bundle], home.env)).code).toBe(0);
    const running = runJson(['watch', '--once'], home.env);
    while (!(existsSync(log) && readFileSync(log, 'utf8').includes('propose\n'))) await new Promise((r) => setTimeout(r, 50));
    const now = new Date();
    utimesSync(home.claudeSession, now, now);
    const first = await running;
    expect(first.code, first.stderr).toBe(0);
    expect(byId(first.json)[DEMO_CLAUDE_ID]).toMatchObject({ outcome: 'live_over_trigger', control: '/compact or relaunch --autocompact' });
    expect(listFiles(home.claudeHome)).toHaveLength(1);
    // Named once while it stays live, as any live session.
    const second = await runJson(['watch', '--once'], home.env);
    expect(second.json.decisions).toEqual([]);
    expect(second.json.skipped.live).toBe(1);
  }, 60_000);

  it('--dry-run says of a session its client takes up while the pass runs what the real pass says: live', async () => {
    home = demoHome(config('[provider.codex]\nstrategy = "slow_strategy"\n'));
    const log = join(home.root, 'slow-strategy.log');
    const bundle = fixturePluginBundle(join(home.root, 'slow-bundle'), 'misbehaving-strategy.mjs', { args: ['slow', log, 'slow-fixture', 'slow_strategy'], id: 'slow-fixture', provides: { strategies: ['slow_strategy'] } });
    expect((await runCli(['plugin', 'add', bundle], home.env)).code).toBe(0);
    const running = runJson(['watch', '--once', '--dry-run'], home.env);
    while (!(existsSync(log) && readFileSync(log, 'utf8').includes('propose\n'))) await new Promise((r) => setTimeout(r, 50));
    const now = new Date();
    utimesSync(home.claudeSession, now, now);
    const dry = await running;
    expect(dry.code, dry.stderr).toBe(0);
    expect(byId(dry.json)[DEMO_CLAUDE_ID]).toMatchObject({ outcome: 'live_over_trigger', control: '/compact or relaunch --autocompact' });
  }, 60_000);

  it('a session removed while its apply runs is counted gone, not failed with an errno', async () => {
    const paused = await watchPausedAtPlan();
    home = paused.home;
    const running = paused.pass;
    // Read and planned, not yet archived or published: the person deletes the session.
    rmSync(home.claudeSession);
    const pass = await running;
    expect(pass.code, pass.stderr).toBe(0);
    expect(pass.json.decisions).toEqual([]);
    expect(pass.json.skipped.gone).toBe(1);
    expect(listFiles(home.claudeHome)).toEqual([]);
  }, 60_000);

  it('a session its client writes to while its apply runs is left to it as live, its file as the client wrote it', async () => {
    const paused = await watchPausedAtPlan();
    home = paused.home;
    const running = paused.pass;
    appendFileSync(home.claudeSession, readFileSync(home.claudeSession, 'utf8').split('\n').filter(Boolean).at(-1) + '\n');
    const written = sha256File(home.claudeSession);
    const pass = await running;
    expect(pass.code, pass.stderr).toBe(0);
    expect(byId(pass.json)[DEMO_CLAUDE_ID]).toMatchObject({ outcome: 'live_over_trigger' });
    expect(sha256File(home.claudeSession)).toBe(written);
    expect(listFiles(home.claudeHome)).toEqual([home.claudeSession]);
  }, 60_000);

  it('a config file broken while a pass runs fails the sessions it reaches then, and once mended they are decided again', async () => {
    home = demoHome(config().replace('"compacted"', '"slow_strategy"'));
    const log = join(home.root, 'slow-strategy.log');
    const bundle = fixturePluginBundle(join(home.root, 'slow-bundle'), 'misbehaving-strategy.mjs', { args: ['slow', log, 'slow-fixture', 'slow_strategy'], id: 'slow-fixture', provides: { strategies: ['slow_strategy'] } });
    expect((await runCli(['plugin', 'add', bundle], home.env)).code).toBe(0);
    const file = join(home.configHome, 'gobstopper', 'config.toml');
    const good = readFileSync(file, 'utf8');
    const running = runJson(['watch', '--once'], home.env);
    // While the smaller Codex session is being planned, the config is saved half edited: the Claude
    // session's apply, next, reads it.
    while (!(existsSync(log) && readFileSync(log, 'utf8').includes('propose\n'))) await new Promise((r) => setTimeout(r, 50));
    writeFileSync(file, '[policy]\ntrigger_tokens = "lots"\n');
    const broken = await running;
    expect(byId(broken.json)[DEMO_CLAUDE_ID]).toMatchObject({ outcome: 'failed', error: { code: 'invalid_config' } });
    writeFileSync(file, good);
    const mended = await runJson(['watch', '--once'], home.env);
    expect(byId(mended.json)[DEMO_CLAUDE_ID]).toMatchObject({ outcome: 'no_plan' });
  }, 60_000);

  it('a pass whose state cannot be saved still reports its forks, with a warning said once; the watch goes on', async () => {
    home = demoHome(config().replace('20000', '200000'));
    const loop = watchLoop(home);
    try {
      await loop.waitFor(() => loop.lines().length >= 1);
      expect(loop.lines()[0].decisions.filter((d: any) => d.outcome === 'compacted')).toEqual([]);
      // A directory where the state file goes (not there when the watch read it), then a trigger the sessions cross.
      rmSync(statePath(home));
      mkdirSync(join(statePath(home), 'in-the-way'), { recursive: true });
      writeFileSync(join(home.configHome, 'gobstopper', 'config.toml'), config());
      await loop.waitFor(() => loop.lines().some((l) => l.decisions?.some((d: any) => d.outcome === 'compacted')));
      const at = loop.lines().findIndex((l) => l.decisions?.some((d: any) => d.outcome === 'compacted'));
      await loop.waitFor(() => loop.lines().length >= at + 3);
    } finally {
      loop.child.kill('SIGINT');
    }
    expect(await loop.exited).toBe(130);
    const passes = loop.lines().filter((l) => l.pass !== undefined);
    for (const pass of passes) expect(validateWatchPass(pass)).toBe(true);
    const at = passes.findIndex((p) => p.decisions.some((d: any) => d.outcome === 'compacted'));
    const compacted = passes[at];
    for (const id of [DEMO_CLAUDE_ID, DEMO_CODEX_ID]) {
      expect(byId(compacted)[id]).toMatchObject({ outcome: 'compacted', reused: false });
      expect(existsSync(byId(compacted)[id].fork.path)).toBe(true);
    }
    const unsaved = compacted.warnings.filter((w: string) => w.startsWith('the watch state was not saved'));
    expect(unsaved).toEqual([expect.stringMatching(/^the watch state was not saved \(rename failed from .* to .*watch-state-all\.json: a directory stands where a file is expected; move it aside \(EISDIR\)\); this watch remembers its decisions while it runs, but the next one to start makes them again$/)]);
    // Said once: later passes fail to save alike, and remember what was decided all the same.
    for (const later of passes.slice(at + 1)) {
      expect(later.warnings ?? []).toEqual([]);
      expect(later.decisions).toEqual([]);
    }
  }, 90_000);

  it('one watch of a provider at a time: a watch that would share one is refused, naming its lock and holder; disjoint watches run together', async () => {
    home = demoHome();
    const loop = watchLoop(home, ['--provider', 'codex']);
    await loop.waitFor(() => loop.lines().length >= 1);
    expect(loop.lines()[0].pass).toBe(1);
    try {
      // Every provider, codex included, as `watch --once` from cron beside the running watch.
      const all = await runJson(['watch', '--once'], home.env);
      expect(all.code).toBe(1);
      expect(all.json).toMatchObject({ ok: false, error: { code: 'watch_running', details: { provider: 'codex', lock: lockPath(home, 'codex'), pid: loop.child.pid } } });
      const human = await runCli(['watch', '--once', '--provider', 'codex', '--provider', 'claude_code'], home.env);
      expect(human.code).toBe(1);
      expect(human.stdout).toBe('');
      expect(human.stderr).toBe(`gobstopper: another watch of codex is running as process ${loop.child.pid} (lock ${lockPath(home, 'codex')}); stop that watch first, or remove the file if no gobstopper process is running\n`);
      // Refused before a pass: nothing of claude_code's was decided, nor any lock of it left behind.
      expect(existsSync(lockPath(home, 'claude_code'))).toBe(false);
      expect(existsSync(join(home.dataHome, 'gobstopper', 'watch-state-all.json'))).toBe(false);
      // A watch of the other provider shares nothing with it and runs.
      const other = await runJson(['watch', '--once', '--provider', 'claude_code'], home.env);
      expect(other.code, other.stderr).toBe(0);
      expect(byId(other.json)[DEMO_CLAUDE_ID]).toMatchObject({ outcome: 'compacted' });
      // A dry run writes nothing and locks nothing.
      expect((await runJson(['watch', '--once', '--dry-run'], home.env)).code).toBe(0);
    } finally {
      loop.child.kill('SIGINT');
    }
    expect(await loop.exited).toBe(130);
    expect(loop.lines()[0].decisions.map((d: any) => d.session_id)).toEqual([DEMO_CODEX_ID]);
    expect(existsSync(lockPath(home, 'codex'))).toBe(false);
    expect((await runJson(['watch', '--once'], home.env)).code).toBe(0);
  }, 90_000);

  it('a lock left by a watch that was killed is taken over; one taken on another host is not', async () => {
    home = demoHome();
    const loop = watchLoop(home);
    await loop.waitFor(() => loop.lines().length >= 1);
    // Killed outright: no exit hook removes its locks.
    loop.child.kill('SIGKILL');
    await loop.exited;
    for (const provider of ['claude_code', 'codex']) expect(JSON.parse(readFileSync(lockPath(home, provider), 'utf8')).pid).toBe(loop.child.pid);
    const next = await runJson(['watch', '--once'], home.env);
    expect(next.code, JSON.stringify(next.json)).toBe(0);
    expect(validateWatchPass(next.json)).toBe(true);
    expect(existsSync(lockPath(home, 'codex'))).toBe(false);

    // A holder on another machine sharing the data directory cannot be probed from here.
    writeFileSync(lockPath(home, 'codex'), JSON.stringify({ pid: 4242, host: 'elsewhere.example', ts: Date.now() }) + '\n', { mode: 0o600 });
    expect(hostname()).not.toBe('elsewhere.example');
    const refused = await runJson(['watch', '--once'], home.env);
    expect(refused.code).toBe(1);
    expect(refused.json.error).toMatchObject({ code: 'watch_running', details: { provider: 'codex', pid: 4242, host: 'elsewhere.example' } });
    expect(refused.json.error.message).toContain('running as process 4242 on elsewhere.example');
    expect(refused.json.error.message).toContain('remove the file if no gobstopper process is running on elsewhere.example');
    expect(existsSync(lockPath(home, 'codex'))).toBe(true);
  });

  it('a read-only data directory: the pass still compacts and reports, warning that its state was not saved (exit 0)', async (ctx) => {
    home = demoHome();
    const as = modeBoundUser(home);
    if (as === null) return ctx.skip('the unprivileged user cannot run the CLI from this checkout');
    const data = join(home.dataHome, 'gobstopper');
    // A first watch made the vault, staging and lock directories, then the data directory was made read-only.
    const first = await runJson(['watch', '--once', '--provider', 'claude_code'], home.env, as);
    expect(first.code, first.stderr).toBe(0);
    chmodSync(data, 0o500);
    try {
      const r = await runJson(['watch', '--once'], home.env, as);
      expect(r.code, JSON.stringify(r.json)).toBe(0);
      expect(validateWatchPass(r.json)).toBe(true);
      expect(byId(r.json)[DEMO_CODEX_ID]).toMatchObject({ outcome: 'compacted', reused: false });
      expect(existsSync(byId(r.json)[DEMO_CODEX_ID].fork.path)).toBe(true);
      expect(byId(r.json)[DEMO_CLAUDE_ID]).toMatchObject({ outcome: 'compacted', reused: true });
      expect(r.json.warnings).toEqual([expect.stringMatching(/^the watch state was not saved \(.*permission denied.*\(EACCES\)\); /)]);
      expect(existsSync(statePath(home))).toBe(false);
      const human = await runCli(['watch', '--once'], home.env, as);
      expect(human.code, human.stderr).toBe(0);
      expect(human.stdout).toMatch(new RegExp(`^already compacted codex ${DEMO_CODEX_ID}`, 'm'));
      expect(human.stderr).toMatch(/^warning: the watch state was not saved \(/m);
      // The locks went with the watches.
      expect(existsSync(lockPath(home, 'codex'))).toBe(false);
    } finally {
      chmodSync(data, 0o700);
    }
  });

  it('a fork a stopped watch published before writing its record is passed over next pass, whose apply of the source finishes it', async () => {
    home = demoHome();
    const stopped = await runJson(['watch', '--once', '--provider', 'codex'], home.env, { extraEnv: { GOBSTOPPER_FAULT: 'publish.after_link:term' } });
    expect(stopped.code).toBe(143);
    const forkPath = /; (\S+) was already published/.exec(stopped.json.error.message)?.[1];
    expect(forkPath && existsSync(forkPath), stopped.json.error.message).toBe(true);
    // Left idle since: its last report is still its source's, over the trigger.
    const tenMinutesAgo = new Date(Date.now() - 600_000);
    utimesSync(forkPath!, tenMinutesAgo, tenMinutesAgo);
    const next = await runJson(['watch', '--once', '--provider', 'codex'], home.env);
    expect(next.json.decisions).toHaveLength(1);
    expect(byId(next.json)[DEMO_CODEX_ID]).toMatchObject({ outcome: 'compacted', reused: true, fork: { path: forkPath } });
    expect(next.json.skipped.published).toBe(1);
  });

  it('a fork a stopped watch had not yet published is published by the next pass, which says it compacted the session now', async () => {
    home = demoHome();
    const stopped = await runJson(['watch', '--once', '--provider', 'codex'], home.env, { extraEnv: { GOBSTOPPER_FAULT: 'receipt.after_pending:term' } });
    expect(stopped.code).toBe(143);
    expect(listFiles(home.codexDir)).toHaveLength(1);
    const next = await runJson(['watch', '--once', '--provider', 'codex'], home.env);
    expect(next.code, JSON.stringify(next.json)).toBe(0);
    // Not "already compacted": no run reported this fork before, and min_interval_secs counts from this pass.
    expect(byId(next.json)[DEMO_CODEX_ID]).toMatchObject({ outcome: 'compacted', reused: false });
    expect(existsSync(byId(next.json)[DEMO_CODEX_ID].fork.path)).toBe(true);
    const state = JSON.parse(readFileSync(join(home.dataHome, 'gobstopper', 'watch-state-codex.json'), 'utf8'));
    expect(JSON.stringify(state)).toContain('"applied_at"');
  });

  it('stopped in the middle of a pass, it names the forks that pass had already published, a path escaped on the terminal', async () => {
    // The smaller codex session is compacted first; the claude one waits on a slow strategy.
    const slowClaude = '[provider.claude_code]\nstrategy = "slow_strategy"\n';
    home = demoHome(config(slowClaude));
    // A codex home whose name holds a control character: its fork is published beside the source.
    const codexHome = join(home.root, 'codex-\u001b[31m-red');
    renameSync(home.codexHome, codexHome);
    const env = { ...home.env, CODEX_HOME: codexHome };
    const log = join(home.root, 'slow-strategy.log');
    const bundle = fixturePluginBundle(join(home.root, 'slow-bundle'), 'misbehaving-strategy.mjs', { args: ['slow', log, 'slow-fixture', 'slow_strategy'], id: 'slow-fixture', provides: { strategies: ['slow_strategy'] } });
    expect((await runCli(['plugin', 'add', bundle], env)).code).toBe(0);
    /** A looping watch, stopped with Ctrl-C once the claude session's plan has been asked for. */
    const stopMidPass = async (args: string[]) => {
      rmSync(log, { force: true });
      const child = spawn(process.execPath, [binPath, 'watch', '--interval', '1', ...args], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
      child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
      while (!(existsSync(log) && readFileSync(log, 'utf8').includes('propose\n'))) await new Promise((r) => setTimeout(r, 50));
      child.kill('SIGINT');
      return { code: await exited, stdout, stderr };
    };

    const json = await stopMidPass(['--json']);
    expect(json.code).toBe(130);
    // The pass was never printed: the stop is all there is, and it names the codex fork.
    const [stopped, ...rest] = json.stdout.trimEnd().split('\n').map((l) => JSON.parse(l));
    expect(rest).toEqual([]);
    expect(stopped).toMatchObject({ ok: false, error: { code: 'interrupted', details: { signal: 'SIGINT' } } });
    const named = /^interrupted by SIGINT; (\S+) was published; resume it with: (.+)$/.exec(stopped.error.message);
    expect(named, stopped.error.message).not.toBeNull();
    expect(stopped.error.details.done).toBe(stopped.error.message.slice('interrupted by SIGINT; '.length));
    const [, forkPath, resume] = named!;
    expect(forkPath!.startsWith(codexHome)).toBe(true);
    expect(existsSync(forkPath!)).toBe(true);
    // It is the codex session's fork, as the next watch finds it.
    const again = await runJson(['watch', '--once', '--provider', 'codex'], env);
    expect(byId(again.json)[DEMO_CODEX_ID]).toMatchObject({ outcome: 'compacted', reused: true, fork: { path: forkPath, resume_command: resume } });

    // Another strategy for codex makes another fork; a person sees the stop on stderr, the path escaped.
    writeFileSync(join(home.configHome, 'gobstopper', 'config.toml'), config(`${slowClaude}[provider.codex]\nstrategy = "elide"\n`));
    const human = await stopMidPass([]);
    expect(human.code).toBe(130);
    expect(human.stdout).toBe('');
    expect(human.stderr).not.toContain('\u001b');
    const line = human.stderr.split('\n').find((l) => l.startsWith('gobstopper: interrupted'));
    expect(line).toMatch(/^gobstopper: interrupted by SIGINT; \S+ was published; resume it with: .+$/);
    expect(line).toContain(`${join(home.root, 'codex-\\u001b[31m-red')}/`);
    expect(line).not.toContain(forkPath!.replace('\u001b', '\\u001b'));
  }, 90_000);
});
