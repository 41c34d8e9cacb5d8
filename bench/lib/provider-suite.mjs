// The benchmarks every provider gets, each against a floor measured in the same run:
// - parse, render and verify of a generated 128 MiB, 100,000-record session, against one process
//   reading the file, splitting it into lines and JSON.parse-ing every line (render also hashes
//   what it reads and writes, and fsyncs the candidate);
// - discover over 1,000 sessions of 1 MiB, against stat + a 512 KiB tail read of the same files.
// A smoke run (bench/lib/scale.mjs) uses 2 MiB and 2,000 records, and 20 sessions (still of 1 MiB,
// so the limit on what discover reads of one session is still tested).
// A provider's bench file describes the provider (how its modules are bundled, its sessions
// written, and its methods called); the measuring is here.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { floorAndValue, readSplitParse, statAndTail } from './measure.mjs';
import { scaled } from './scale.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const RUNS = scaled(5, 1);
/** The large session every provider writes (`writeLarge`), and how many sessions `writeMany` writes. */
export const LARGE = { mib: scaled(128, 2), records: scaled(100_000, 2_000) };
export const MANY = scaled(1000, 20);

/**
 * The provider's modules and its session generators, bundled from source into `dir` and loaded
 * in-process (the built bundle serves the protocol on stdin when loaded, so it cannot be imported).
 */
export async function loadBundle(dir, name, exports) {
  const outfile = join(dir, `${name}-bench.cjs`);
  await build({
    absWorkingDir: root,
    stdin: { contents: exports.join('\n'), resolveDir: root, loader: 'ts' },
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    logLevel: 'warning',
  });
  return { file: outfile, module: createRequire(import.meta.url)(outfile) };
}

/** The render apply asks for: elide every live result but the newest 8, a state card, a new session id. */
function applyParams(providerId, newSessionId, transcript, path, staging) {
  const elidable = transcript.items.filter((i) => i.est_tokens > 0 && (i.elidable_bytes ?? 0) > 0).map((i) => i.line_index);
  return {
    provider_id: providerId,
    path,
    source_sha256: transcript.source_sha256,
    edits: [
      { op: 'elide', line_indexes: elidable.slice(0, -8), stub_template: '[output elided by gobstopper: {bytes} bytes]' },
      { op: 'inject_digest', digest: { goal: 'Keep the checks green', summary: 'Earlier tool output was elided.', covers_items: elidable.length - 8 } },
    ],
    staging_path: staging,
    new_session_id: newSessionId,
    now: new Date().toISOString(),
  };
}

/**
 * `p` describes a provider:
 * - `name` (benchmark names are `provider-<name>.…`), `id` (its provider id), `newSessionId` (a fork id);
 * - `load(dir)`: its loaded bundle; `writeLarge(mod, dir)`: the path of a generated session of
 *   LARGE.mib MiB and LARGE.records records; `writeMany(mod, dir)`: `{ home, files }`, MANY
 *   sessions of 1 MiB;
 * - `parse`, `render`, `verify`, `discover`: its methods, called with the bundle and the params;
 * - `recordsAdded`: the records the render apply asks for adds to the large session;
 *   `targets`: the ratio per benchmark;
 * - `renderForms` (optional): renders measured under other names (`render_<size>_<name>`), each
 *   with a `before(mod)` run ahead of every render and a `check(mod, runs)` run after them all.
 */
export function providerBenchmarks(p) {
  const name = (what) => `provider-${p.name}.${what}`;
  const size = `${LARGE.mib}mib_${LARGE.records / 1000}k_records`;
  async function withDir(fn) {
    const dir = mkdtempSync(join(tmpdir(), `gob-bench-${p.name}-`));
    try {
      return await fn(await p.load(dir), dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const large = (fn) => withDir((mod, dir) => fn(mod, p.writeLarge(mod, dir), dir));
  /** `call` on the large session (once untimed, to warm it), timed against the parse floor. */
  const onLarge = (what, target, call, check) => ({
    name: name(what),
    target: `ratio <= ${target}`,
    run() {
      return large(async (mod, path) => {
        await call(mod, { provider_id: p.id, path });
        const measured = await floorAndValue(RUNS, {
          floor: () => readSplitParse(path),
          value: () => call(mod, { provider_id: p.id, path }),
          check,
        });
        return { name: this.name, ...measured, unit: 'ms' };
      });
    },
  });
  const renderForms = p.renderForms ?? [{ name: 'elide_card_fork' }];
  return [
    onLarge(`parse_${size}`, p.targets.parse, p.parse, (transcript) => {
      if (transcript.items.length !== LARGE.records) throw new Error('parse returned the wrong number of items');
    }),
    {
      name: name(`discover_${MANY}x1mib`),
      target: `ratio <= ${p.targets.discover}, and at most 600 KiB read per session`,
      run() {
        return withDir(async (mod, dir) => {
          const { home, files } = p.writeMany(mod, dir);
          if (files.length !== MANY) throw new Error(`wrote ${files.length} sessions, expected ${MANY}`);
          p.discover(mod, { provider_id: p.id, home });
          const measured = await floorAndValue(RUNS, {
            floor: () => statAndTail(files, 512 * 1024),
            value: () => p.discover(mod, { provider_id: p.id, home }),
            check: (found) => {
              if (found.sessions.length !== MANY) throw new Error(`discover found ${found.sessions.length} of ${MANY} sessions`);
              const most = Math.max(...found.sessions.map((s) => s.bytes_read));
              if (most > 600 * 1024) throw new Error(`discover read ${most} bytes of one session`);
            },
          });
          return { name: this.name, ...measured, unit: 'ms' };
        });
      },
    },
    ...renderForms.map((form) => ({
      name: name(`render_${LARGE.mib}mib_${form.name}`),
      target: `ratio <= ${p.targets.render}`,
      run() {
        return large(async (mod, path, dir) => {
          const transcript = await p.parse(mod, { provider_id: p.id, path });
          const staging = (r) => join(dir, `candidate-${r}.jsonl`);
          const measured = await floorAndValue(RUNS, {
            before: (r) => {
              writeFileSync(staging(r), '', { mode: 0o600 });
              form.before?.(mod);
            },
            floor: () => readSplitParse(path),
            value: (r) => p.render(mod, applyParams(p.id, p.newSessionId, transcript, path, staging(r))),
            check: (result, r) => {
              if (result.record_count !== LARGE.records + p.recordsAdded || result.elided_records < LARGE.records / 100) throw new Error(`render wrote ${result.record_count} records, ${result.elided_records} elided`);
              rmSync(staging(r));
            },
          });
          form.check?.(mod, RUNS);
          return { name: this.name, ...measured, unit: 'ms' };
        });
      },
    })),
    onLarge(`verify_${size}`, p.targets.verify, p.verify, (result) => {
      if (result.record_count !== LARGE.records || result.findings.some((f) => f.severity === 'error')) throw new Error('verify did not read the session as sound');
    }),
  ];
}
