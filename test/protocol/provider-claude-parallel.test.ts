/**
 * The Claude Code provider reading a transcript on several threads gives exactly what one pass
 * gives: the same Transcript, the same verify findings, the same scan (every column of every row),
 * and the same error, message included, for every way a read can fail. The parallel side is the
 * provider bundled with esbuild (workers start from the bundle file, as they do from main.cjs) with
 * parallelism forced on small files; the single pass is the provider's sources, which never start
 * threads. Range boundaries are swept across every line of the small sessions.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { parseTranscript } from '../../plugins/provider-claude-code/src/parse.js';
import { readLimits } from '../../plugins/provider-claude-code/src/limits.js';
import { scanTranscript, type ScanResult } from '../../plugins/provider-claude-code/src/scan.js';
import { verifyTranscript } from '../../plugins/provider-claude-code/src/verify.js';
import type { ProviderParseParams, ProviderVerifyResult, Transcript } from '../../schemas/generated/types.js';
import type { HostContext, PluginDefinition, ProviderDefinition } from '../../sdk/serve.js';
import { writeBigSession } from '../fixtures/claude/big-session.js';
import { breakages, tornFinalLine } from '../fixtures/claude/breakages.js';
import { spreadSessionLines } from '../fixtures/claude/spread-session.js';
import { branchedSession, compactedSession, modernSession, oldSession, subagentTranscript } from '../fixtures/claude/sessions.js';
import { loadBundledProvider, repoRoot, sweep, type ParallelConfig, type PoolControls } from './claude-parallel-support.js';

const fixturesDir = join(repoRoot, '..', 'shared', 'fixtures');
const realDir = join(fixturesDir, 'real');
const dialectsFile = join(fixturesDir, 'dialects-v1', 'claude-branch.jsonl');

type Params = Partial<ProviderParseParams>;
type Scan = (path: string, options: { limits: ReturnType<typeof readLimits>; strict: boolean; detail?: boolean }) => Promise<ScanResult>;
interface ParallelBundle extends PoolControls {
  startedScanWorkers: () => number;
  claudeCodePlugin: PluginDefinition;
  parseTranscript: (params: ProviderParseParams) => Promise<Transcript>;
  verifyTranscript: (params: ProviderParseParams) => Promise<ProviderVerifyResult>;
  scanTranscript: Scan;
  readLimits: typeof readLimits;
}

let dir: string;
let bundleFile: string;
let par: ParallelBundle;
let n = 0;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'claude-parallel-'));
  ({ file: bundleFile, bundle: par } = await loadBundledProvider<ParallelBundle>(dir, 'claude-parallel.cjs', [
    "export { enableParallelScan, parallelScanCounts, startedScanWorkers } from './plugins/provider-claude-code/src/scan-pool.ts';",
    "export { claudeCodePlugin } from './plugins/provider-claude-code/src/plugin.ts';",
    "export { parseTranscript } from './plugins/provider-claude-code/src/parse.ts';",
    "export { verifyTranscript } from './plugins/provider-claude-code/src/verify.ts';",
    "export { scanTranscript } from './plugins/provider-claude-code/src/scan.ts';",
    "export { readLimits } from './plugins/provider-claude-code/src/limits.ts';",
  ]));
}, 60_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => vi.unstubAllEnvs());

function file(text: string | Buffer, name = `t${n++}.jsonl`): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

const jsonl = (lines: readonly string[]) => lines.join('\n') + '\n';

/** A read's value, or its error as the host would see it (code and one-line message). */
async function outcome<T>(read: () => Promise<T>): Promise<{ value: T } | { error: { code: unknown; message: string } }> {
  try {
    return { value: await read() };
  } catch (e) {
    const error = e as { code?: unknown; message: string };
    return { error: { code: error.code ?? null, message: error.message } };
  }
}

/** A scan with its table as columns and its uuid index as the line of each uuid: what every later step reads. */
async function scanOutcome(scan: Scan, limits: ReturnType<typeof readLimits>, path: string, strict: boolean, detail: boolean) {
  const got = await outcome(() => scan(path, { limits, strict, detail }));
  if (!('value' in got)) return got;
  const { table, uuidLine, ...rest } = got.value;
  const lines = new Map<string, number | undefined>();
  for (const uuid of [...table.uuid, ...table.parentUuid, 'ffffffff-dead-4bad-8bad-000000000000']) if (uuid !== null) lines.set(uuid, uuidLine.get(uuid));
  return { value: { ...rest, table: table.columns(), uuidLine: lines } };
}

/** Everything one read of `path` gives, through `parse`, `verify` and both kinds of scan. */
async function readAll(side: { parse: ParallelBundle['parseTranscript']; verify: ParallelBundle['verifyTranscript']; scan: Scan; limits: typeof readLimits }, path: string, params: Params, scans: boolean) {
  const request = { provider_id: 'claude_code', path, ...params };
  const limits = side.limits(params);
  return {
    parse: await outcome(() => side.parse(request)),
    verify: await outcome(() => side.verify(request)),
    strictScan: scans ? await scanOutcome(side.scan, limits, path, true, true) : null,
    treeScan: scans ? await scanOutcome(side.scan, limits, path, false, false) : null,
  };
}

const onePass = { parse: parseTranscript, verify: verifyTranscript, scan: scanTranscript as Scan, limits: readLimits };

type Config = ParallelConfig;

/**
 * Reads `path` in one pass and then in parallel under each config; every parallel read must equal
 * the single pass and none may fall back. Returns the single pass and how many reads used threads.
 */
async function expectSameAcross(path: string, configs: Config[], params: Params = {}, scans = true) {
  const expected = await readAll(onePass, path, params, scans);
  const before = par.parallelScanCounts();
  for (const config of configs) {
    par.enableParallelScan(bundleFile, { minBytes: 0, coldMinBytes: 0, ...config });
    const got = await readAll({ parse: par.parseTranscript, verify: par.verifyTranscript, scan: par.scanTranscript, limits: par.readLimits }, path, params, scans);
    expect(got, JSON.stringify(config)).toStrictEqual(expected);
  }
  const after = par.parallelScanCounts();
  expect(after.fallbacks, 'no parallel read fell back to one pass').toBe(before.fallbacks);
  return { expected, parallelReads: after.parallel - before.parallel };
}

async function expectSame(text: string | Buffer, params: Params = {}, fourStep = 3) {
  const path = file(text);
  const result = await expectSameAcross(path, sweep(text, fourStep), params);
  expect(result.parallelReads).toBeGreaterThan(0);
  return result.expected;
}

const errorOf = (o: { value: unknown } | { error: { message: string } }) => ('error' in o ? o.error.message : null);

describe('generated sessions read in parallel equal one pass', () => {
  it('a session whose calls, results, responses, titles and uuids are spread across ranges', async () => {
    const expected = await expectSame(jsonl(spreadSessionLines()), {}, 2);
    const t = (expected.parse as { value: Transcript }).value;
    // What the sweep must have split: results labelled from calls many lines earlier, a title
    // from the last range, a duplicate uuid and malformed usage.
    expect(t.items.filter((i) => i.kind === 'tool_result').map((i) => i.label)).toEqual(['Read', 'Bash', 'Grep', 'Grep', 'Edit', 'Bash', 'Read']);
    expect(t.session.title).toBe('Late custom title');
    expect(t.findings!.map((f) => f.code)).toEqual(expect.arrayContaining(['duplicate_uuid', 'invalid_json', 'blank_line', 'invalid_content_block']));
    const scan = (expected.strictScan as { value: { table: { usageProblems: unknown[] } } }).value;
    expect(scan.table.usageProblems).toHaveLength(1);
  });

  it('the named sessions and every breakage', async () => {
    await expectSame(modernSession().toJsonl());
    await expectSame(branchedSession().b.toJsonl());
    await expectSame(compactedSession().b.toJsonl());
    await expectSame(oldSession().b.toJsonl());
    await expectSame(subagentTranscript().toJsonl());
    await expectSame(tornFinalLine());
    for (const b of breakages()) await expectSame(b.text, {}, 5);
    // The leaf's record is invalid, in whichever range it falls: the finding names its line.
    const invalidLeaf = modernSession();
    const leaf = invalidLeaf.user('the leaf');
    (invalidLeaf.records.at(-1) as { message: unknown }).message = 'not an object';
    invalidLeaf.lastPrompt(leaf);
    const read = await expectSame(invalidLeaf.toJsonl(), {}, 5);
    expect(JSON.stringify(read.verify)).toContain(`names the record on line ${invalidLeaf.records.length - 1} as its leaf, but that record is invalid`);
  });

  it('a large session, with lines crossing the 1 MiB read chunks inside every range', async () => {
    const path = join(dir, 'big.jsonl');
    writeBigSession(path, { targetBytes: 6 * 1024 * 1024, records: 4000 });
    const configs = [
      { threads: 2, mainShare: 0.5 },
      { threads: 4, mainShare: 0.1, batchRows: 333 },
      { threads: 4, mainShare: 0.37 },
    ];
    const { expected, parallelReads } = await expectSameAcross(path, configs);
    expect(parallelReads).toBe(configs.length * 4);
    expect((expected.parse as { value: Transcript }).value.items).toHaveLength(4000);
  });
});

describe('real transcripts read in parallel equal one pass', () => {
  const present = existsSync(realDir);
  if (!present) console.log(`parallel real-data comparisons skipped: ${realDir} is absent`);
  const walk = (d: string): string[] => readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(d, e.name)) : e.name.endsWith('.jsonl') ? [join(d, e.name)] : []));
  const files = present ? [...walk(realDir), ...(existsSync(dialectsFile) ? [dialectsFile] : [])].sort() : [];
  const configs = [
    { threads: 2, mainShare: 0.3 },
    { threads: 2, mainShare: 0.62 },
    { threads: 3, mainShare: 0.2 },
    { threads: 4, mainShare: 0.1 },
    { threads: 4, mainShare: 0.45 },
  ];
  // An each over no files is a suite without tests, which vitest counts as a failure: without the
  // folder the suite holds one skipped test that says why.
  if (!present) it.skip(`${realDir} is absent`, () => undefined);
  else it.each(files.map((f) => [relative(fixturesDir, f)]))('%s', async (name) => {
    const path = join(fixturesDir, name);
    const { expected, parallelReads } = await expectSameAcross(path, configs, {}, statSync(path).size < 1024 * 1024);
    expect(parallelReads).toBeGreaterThan(0);
    // A Claude transcript parses; another provider's file is refused the same way on both sides.
    if (name.startsWith('real/claude/')) expect(errorOf(expected.parse)).toBeNull();
  });
});

describe('a read that fails fails the same way in parallel', () => {
  const lines = () => modernSession().lines();
  const notObject = '[1, 2, 3]';
  const badRecord = '{"type": 5, "uuid": "x"}';
  const badUtf8 = Buffer.concat([Buffer.from('{"type":"user","message":{"role":"user","content":"caf'), Buffer.from([0xc3, 0x28]), Buffer.from('"}}')]);

  function withLines(base: string[], inserts: Array<[number, string | Buffer]>): Buffer {
    const parts: Array<string | Buffer> = [...base];
    for (const [at, line] of [...inserts].sort((a, b) => b[0] - a[0])) parts.splice(at, 0, line);
    return Buffer.concat(parts.flatMap((p) => [Buffer.from(p), Buffer.from('\n')]));
  }

  it('the earliest bad line wins, whichever range holds each', async () => {
    const base = lines();
    const text = withLines(base, [
      [4, notObject],
      [14, badUtf8],
      [22, badRecord],
    ]);
    const expected = await expectSame(text);
    expect(errorOf(expected.parse)).toMatch(/: line 5 is not a JSON object$/);
    // Verify reads on past them and reports each.
    expect(errorOf(expected.verify)).toBeNull();
    const late = await expectSame(withLines(base, [[base.length - 2, badUtf8]]));
    expect(errorOf(late.parse)).toMatch(new RegExp(`: line ${base.length - 1} is not valid UTF-8$`));
    const record = await expectSame(withLines(base, [[9, badRecord], [base.length - 3, notObject]]));
    expect(errorOf(record.parse)).toMatch(/: line 10 has no string "type"$/);
  });

  it('a line over the record limit, before or after a bad line', async () => {
    const base = lines();
    const longest = Math.max(...base.map((l) => Buffer.byteLength(l)));
    const limit = longest + 64;
    vi.stubEnv('GOBSTOPPER_MAX_RECORD_BYTES', String(limit));
    const oversized = JSON.stringify({ type: 'user', message: { role: 'user', content: 'x'.repeat(limit) } });
    const lateLong = await expectSame(withLines(base, [[3, notObject], [base.length - 4, oversized]]));
    expect(errorOf(lateLong.parse)).toMatch(/: line 4 is not a JSON object$/);
    expect(errorOf(lateLong.verify)).toBeNull();
    const earlyLong = await expectSame(withLines(base, [[6, oversized], [base.length - 4, notObject]]));
    expect(errorOf(earlyLong.parse)).toMatch(new RegExp(`: line 7 is over the ${limit}-byte record limit \\(GOBSTOPPER_MAX_RECORD_BYTES\\)$`));
    const verified = (earlyLong.verify as { value: ProviderVerifyResult }).value;
    expect(verified.findings.map((f) => [f.code, f.line_index])).toEqual([['oversized_record', 6]]);
  });

  it('too many records, with a bad line before or after the limit', async () => {
    const base = lines();
    const max = base.length - 6;
    const plain = await expectSame(jsonl(base), { max_records: max });
    expect(errorOf(plain.parse)).toMatch(new RegExp(`has more than ${max} records$`));
    const badFirst = await expectSame(withLines(base, [[max - 3, badRecord]]), { max_records: max });
    expect(errorOf(badFirst.parse)).toMatch(new RegExp(`: line ${max - 2} has no string "type"$`));
    const limitFirst = await expectSame(withLines(base, [[max + 1, badRecord]]), { max_records: max });
    expect(errorOf(limitFirst.parse)).toMatch(new RegExp(`has more than ${max} records$`));
    // The first line past the limit is never read: the count is refused before it.
    const atLimit = await expectSame(withLines(base, [[max, badRecord]]), { max_records: max });
    expect(errorOf(atLimit.parse)).toMatch(new RegExp(`has more than ${max} records$`));
  });

  it('an unterminated final line, readable or not', async () => {
    const base = lines();
    const torn = await expectSame(jsonl(base).slice(0, -20));
    expect((torn.parse as { value: Transcript }).value.findings!.map((f) => f.code)).toContain('torn_final_line');
    const bad = await expectSame(jsonl(base) + notObject);
    expect(errorOf(bad.parse)).toMatch(new RegExp(`: line ${base.length + 1} is not a JSON object$`));
  });

  it('NUL bytes, an empty file and a file of one line', async () => {
    const base = lines();
    const binary = await expectSame(withLines(base, [[2, notObject], [base.length - 2, '{"type":"user","x":"\u0000"}']]));
    expect(errorOf(binary.parse)).toMatch(/binary/);
    await expectSameAcross(file(''), [{ threads: 2, mainShare: 0.5 }]);
    await expectSameAcross(file(base[0]!), [{ threads: 4, mainShare: 0.2 }]);
  });
});

describe('NUL bytes past the first MiB', () => {
  // The reader checks each 1 MiB chunk for NUL bytes before it hands out the lines that end in it,
  // so a bad line in an earlier chunk is met first, and one in the same or a later chunk is not.
  it('the earliest of a bad line and binary content wins, as in one pass', async () => {
    const path = join(dir, 'nul-base.jsonl');
    writeBigSession(path, { targetBytes: 3 * 1024 * 1024, records: 2400 });
    const base = readFileSync(path, 'utf8').split('\n').slice(0, -1);
    const lineAt = (fraction: number) => Math.floor(base.length * fraction);
    const nul = '{"type":"user","x":"\u0000"}';
    const configs = [
      { threads: 2, mainShare: 0.5 },
      { threads: 4, mainShare: 0.2 },
      { threads: 3, mainShare: 0.6 },
    ];
    const early = [...base];
    early.splice(lineAt(0.7), 0, nul);
    early.splice(lineAt(0.1), 0, '[1]');
    const fatalFirst = await expectSameAcross(file(jsonl(early)), configs);
    expect(errorOf(fatalFirst.expected.parse)).toMatch(new RegExp(`: line ${lineAt(0.1) + 1} is not a JSON object$`));
    const late = [...base];
    late.splice(lineAt(0.8), 0, '[1]');
    late.splice(lineAt(0.2), 0, nul);
    const binaryFirst = await expectSameAcross(file(jsonl(late)), configs);
    expect(errorOf(binaryFirst.expected.parse)).toMatch(/is binary \(contains NUL bytes\), not JSONL$/);
    expect((binaryFirst.expected.verify as { value: ProviderVerifyResult }).value.findings.map((f) => f.code)).toEqual(['binary_content']);
    // Both in the third MiB, the bad line first: the chunk is refused before its lines are read.
    const sameChunk = [...base];
    sameChunk.splice(lineAt(0.8), 0, nul);
    sameChunk.splice(lineAt(0.72), 0, '[1]');
    const bytesBefore = (n: number) => Buffer.byteLength(jsonl(sameChunk.slice(0, n)));
    expect(Math.floor(bytesBefore(lineAt(0.72)) / (1024 * 1024))).toBe(Math.floor(bytesBefore(lineAt(0.8) + 1) / (1024 * 1024)));
    const chunkFirst = await expectSameAcross(file(jsonl(sameChunk)), configs);
    expect(errorOf(chunkFirst.expected.parse)).toMatch(/is binary \(contains NUL bytes\), not JSONL$/);
  });
});

describe('when threads are used', () => {
  /** The provider bundle loaded again under another name: its own settings and workers. */
  function freshCopy(name: string): { file: string; claude: ParallelBundle } {
    const copy = join(dir, name);
    copyFileSync(bundleFile, copy);
    return { file: copy, claude: createRequire(import.meta.url)(copy) as ParallelBundle };
  }

  it('not for files under the threshold, nor for mid-sized ones while the workers are new', async () => {
    const { file: copy, claude } = freshCopy('fresh-defaults.cjs');
    const small = file(modernSession().toJsonl());
    const mid = file(jsonl(spreadSessionLines()));
    const large = join(dir, 'large.jsonl');
    writeBigSession(large, { targetBytes: 400 * 1024, records: 300 });
    const [smallBytes, midBytes] = [statSync(small).size, statSync(mid).size];
    claude.enableParallelScan(copy, { minBytes: smallBytes + 1, coldMinBytes: midBytes + 1 });
    const parse = (path: string) => claude.parseTranscript({ provider_id: 'claude_code', path });
    expect(await parse(small)).toStrictEqual(await parseTranscript({ provider_id: 'claude_code', path: small }));
    expect(await parse(mid)).toStrictEqual(await parseTranscript({ provider_id: 'claude_code', path: mid }));
    expect(claude.parallelScanCounts()).toEqual({ parallel: 0, fallbacks: 0 });
    expect(await parse(large)).toStrictEqual(await parseTranscript({ provider_id: 'claude_code', path: large }));
    expect(claude.parallelScanCounts()).toEqual({ parallel: 1, fallbacks: 0 });
  });

  it('starts them as soon as a session that will be read on them is identified, not when one is discovered', async () => {
    const { file: copy, claude } = freshCopy('fresh-expect.cjs');
    const provider = claude.claudeCodePlugin.providers!.claude_code! as Required<ProviderDefinition>;
    const ctx = { log: () => undefined } as unknown as HostContext;
    const home = join(dir, 'expect-home');
    const projects = join(home, 'projects', '-home-dev-projects-demo');
    mkdirSync(projects, { recursive: true });
    const small = join(projects, '00000000-0000-4000-8000-00000000000a.jsonl');
    writeFileSync(small, modernSession().toJsonl());
    const large = join(dir, 'expect-large.jsonl');
    writeBigSession(large, { targetBytes: 400 * 1024, records: 300 });
    // Parallel from the size of `large` on, even while the workers are new.
    claude.enableParallelScan(copy, { minBytes: 0, coldMinBytes: statSync(large).size, threads: 2 });
    const request = { provider_id: 'claude_code', home, include_subagents: false, max_age_secs: null };

    expect((await provider.identify({ provider_id: 'claude_code', path: small }, ctx)).matches).toBe(true);
    expect((await provider.discover(request, ctx)).sessions).toHaveLength(1);
    expect(claude.startedScanWorkers(), 'no thread for sessions read on one thread').toBe(0);

    expect((await provider.identify({ provider_id: 'claude_code', path: large }, ctx)).matches).toBe(true);
    expect(claude.startedScanWorkers()).toBe(1);
    expect(await claude.parseTranscript({ provider_id: 'claude_code', path: large })).toStrictEqual(await parseTranscript({ provider_id: 'claude_code', path: large }));
    expect(claude.parallelScanCounts()).toEqual({ parallel: 1, fallbacks: 0 });

    // Listing sessions (detect, an id prefix) reads none of them: a large one among them starts nothing.
    const { file: other, claude: fresh } = freshCopy('fresh-expect-discover.cjs');
    fresh.enableParallelScan(other, { minBytes: 0, coldMinBytes: statSync(large).size, threads: 2 });
    copyFileSync(large, join(projects, '00000000-0000-4000-8000-00000000000b.jsonl'));
    const freshProvider = fresh.claudeCodePlugin.providers!.claude_code! as Required<ProviderDefinition>;
    expect((await freshProvider.discover(request, ctx)).sessions).toHaveLength(2);
    expect(fresh.startedScanWorkers()).toBe(0);
  });

  it('never keeps a process alive once its reads are done', async () => {
    const path = file(jsonl(spreadSessionLines()));
    const script = [
      `const claude = require(${JSON.stringify(bundleFile)});`,
      `claude.enableParallelScan(${JSON.stringify(bundleFile)}, { minBytes: 0, coldMinBytes: 0, threads: 3 });`,
      `claude.parseTranscript({ provider_id: 'claude_code', path: ${JSON.stringify(path)} })`,
      `  .then((t) => console.log(JSON.stringify({ items: t.items.length, counts: claude.parallelScanCounts() })));`,
    ].join('\n');
    const run = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 20_000 });
    expect(run.error, 'the process must exit on its own').toBeUndefined();
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ items: spreadSessionLines().length, counts: { parallel: 1, fallbacks: 0 } });
  });
});

describe('a worker that cannot run', () => {
  it('falls back to one pass with the same result, and stops trying', async () => {
    const broken = join(dir, 'broken.cjs');
    writeFileSync(broken, "throw new Error('this bundle cannot start');\n");
    const path = file(jsonl(spreadSessionLines()));
    const expected = await readAll(onePass, path, {}, true);
    const before = par.parallelScanCounts();
    par.enableParallelScan(broken, { minBytes: 0, coldMinBytes: 0, threads: 3, mainShare: 0.3 });
    const parallelSide = { parse: par.parseTranscript, verify: par.verifyTranscript, scan: par.scanTranscript, limits: par.readLimits };
    expect(await readAll(parallelSide, path, {}, true)).toStrictEqual(expected);
    const after = par.parallelScanCounts();
    // The first read fell back; the pool is then known broken and later reads use one pass.
    expect(after).toEqual({ parallel: before.parallel, fallbacks: before.fallbacks + 1 });
    par.enableParallelScan(bundleFile, { minBytes: 0, coldMinBytes: 0, threads: 3, mainShare: 0.3 });
    expect(await readAll(parallelSide, path, {}, true)).toStrictEqual(expected);
    expect(par.parallelScanCounts()).toEqual({ parallel: after.parallel + 4, fallbacks: after.fallbacks });
  });
});
