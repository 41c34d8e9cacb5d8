// Codex provider benchmarks, each against a floor measured in the same run. The provider's modules
// and the rollout generators are bundled from source into a temporary file (the built bundle serves
// the protocol on stdin when loaded, so it cannot be imported).
//
// Floors:
// - parse, render, verify: one process reading the file, splitting it into lines and JSON.parse-ing
//   every line (render also hashes what it reads and writes, and fsyncs the candidate).
// - discover: stat + a 512 KiB tail read of each of the same files.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { MIB, floorAndValue, readSplitParse, statAndTail } from './lib/measure.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const RUNS = 5;

/** The provider's parse and discover plus the synthetic rollout generators, loaded in-process. */
async function loadCodex(dir) {
  const outfile = join(dir, 'codex-bench.cjs');
  await build({
    absWorkingDir: root,
    stdin: {
      contents: [
        "export { parse } from './plugins/provider-codex/src/parse.ts';",
        "export { render } from './plugins/provider-codex/src/render.ts';",
        "export { verify } from './plugins/provider-codex/src/verify.ts';",
        "export { discover } from './plugins/provider-codex/src/discover.ts';",
        "export { writeLargeRollout } from './test/fixtures/codex/large-rollout.ts';",
        "export { RolloutBuilder, filler, sessionsDir } from './test/fixtures/codex/rollout-builder.ts';",
      ].join('\n'),
      resolveDir: root,
      loader: 'ts',
    },
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    logLevel: 'warning',
  });
  return createRequire(import.meta.url)(outfile);
}

const ROLLOUT_ID = '019c9999-0000-7000-8000-000000000128';

/** The render apply asks for: elide every live output but the newest 8, a state card, a new session id. */
function applyParams(transcript, path, staging) {
  const elidable = transcript.items.filter((i) => i.est_tokens > 0 && (i.elidable_bytes ?? 0) > 0).map((i) => i.line_index);
  return {
    provider_id: 'codex',
    path,
    source_sha256: transcript.source_sha256,
    edits: [
      { op: 'elide', line_indexes: elidable.slice(0, -8), stub_template: '[output elided by gobstopper: {bytes} bytes]' },
      { op: 'inject_digest', digest: { goal: 'Keep the checks green', summary: 'Earlier tool output was elided.', covers_items: elidable.length - 8 } },
    ],
    staging_path: staging,
    new_session_id: '019c9999-0000-7000-8000-0000000f0f0f',
    now: new Date().toISOString(),
  };
}

async function withLargeRollout(fn) {
  const dir = mkdtempSync(join(tmpdir(), 'gob-bench-codex-'));
  try {
    const codex = await loadCodex(dir);
    const path = join(dir, `rollout-2026-02-23T12-54-34-${ROLLOUT_ID}.jsonl`);
    const written = codex.writeLargeRollout(path, { records: 100_000, bytes: 128 * MIB, paginated: true, id: ROLLOUT_ID });
    if (written.records !== 100_000) throw new Error(`generated ${written.records} records, expected 100000`);
    return await fn(codex, path, dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const benchmarks = [
  {
    name: 'provider-codex.parse_128mib_100k_records',
    target: 'ratio <= 2.5',
    async run() {
      const dir = mkdtempSync(join(tmpdir(), 'gob-bench-codex-'));
      try {
        const codex = await loadCodex(dir);
        const path = join(dir, 'rollout-2026-02-23T12-54-34-019c9999-0000-7000-8000-000000000128.jsonl');
        const written = codex.writeLargeRollout(path, { records: 100_000, bytes: 128 * MIB, paginated: true });
        if (written.records !== 100_000) throw new Error(`generated ${written.records} records, expected 100000`);
        await codex.parse({ provider_id: 'codex', path });
        const measured = await floorAndValue(RUNS, {
          floor: () => readSplitParse(path),
          value: () => codex.parse({ provider_id: 'codex', path }),
          check: (transcript) => {
            if (transcript.items.length !== 100_000) throw new Error('parse returned the wrong number of items');
          },
        });
        return { name: this.name, ...measured, unit: 'ms' };
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  },
  {
    name: 'provider-codex.discover_1000x1mib',
    target: 'ratio <= 3, and at most 600 KiB read per session',
    async run() {
      const dir = mkdtempSync(join(tmpdir(), 'gob-bench-codex-'));
      try {
        const codex = await loadCodex(dir);
        const template = new codex.RolloutBuilder({ id: '019c0000-0000-7000-8000-000000000000' });
        template.sessionMeta().preamble().turnContext().user('a long session');
        for (let i = 0; Buffer.byteLength(template.text()) < MIB; i++) {
          template.shell(`call_${i}`, 'cat src/file.ts', codex.filler(6000, `chunk ${i}`));
          template.assistant('Next step.');
          template.tokenCount({ input: 1000 + i, cached: 500, output: 10 }, { input: 50_000 + i * 1000, cached: 40_000, output: 500 });
        }
        const text = template.text();
        const home = join(dir, 'codex-home');
        const day = codex.sessionsDir(home);
        mkdirSync(day, { recursive: true });
        const files = [];
        for (let k = 0; k < 1000; k++) {
          const id = `019c0000-0000-7000-8000-${String(k).padStart(12, '0')}`;
          const file = join(day, `rollout-2026-02-23T12-00-00-${id}.jsonl`);
          writeFileSync(file, text.replace(template.id, id));
          files.push(file);
        }
        codex.discover({ provider_id: 'codex', home });
        const measured = await floorAndValue(RUNS, {
          floor: () => statAndTail(files, 512 * 1024),
          value: () => codex.discover({ provider_id: 'codex', home }),
          check: (found) => {
            if (found.sessions.length !== 1000) throw new Error(`discover found ${found.sessions.length} of 1000 sessions`);
            const most = Math.max(...found.sessions.map((s) => s.bytes_read));
            if (most > 600 * 1024) throw new Error(`discover read ${most} bytes of one session`);
          },
        });
        return { name: this.name, ...measured, unit: 'ms' };
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  },
  {
    name: 'provider-codex.render_128mib_elide_card_fork',
    target: 'ratio <= 2',
    async run() {
      return withLargeRollout(async (codex, path, dir) => {
        const transcript = await codex.parse({ provider_id: 'codex', path });
        const staging = (r) => join(dir, `candidate-${r}.jsonl`);
        const measured = await floorAndValue(RUNS, {
          before: (r) => writeFileSync(staging(r), '', { mode: 0o600 }),
          floor: () => readSplitParse(path),
          value: (r) => codex.render(applyParams(transcript, path, staging(r))),
          check: (result, r) => {
            if (result.record_count !== 100_001 || result.elided_records < 1000) throw new Error(`render wrote ${result.record_count} records, ${result.elided_records} elided`);
            rmSync(staging(r));
          },
        });
        return { name: this.name, ...measured, unit: 'ms' };
      });
    },
  },
  {
    name: 'provider-codex.verify_128mib_100k_records',
    target: 'ratio <= 2',
    async run() {
      return withLargeRollout(async (codex, path) => {
        await codex.verify({ provider_id: 'codex', path });
        const measured = await floorAndValue(RUNS, {
          floor: () => readSplitParse(path),
          value: () => codex.verify({ provider_id: 'codex', path }),
          check: (result) => {
            if (result.record_count !== 100_000 || result.findings.some((f) => f.severity === 'error')) throw new Error('verify did not read the rollout as sound');
          },
        });
        return { name: this.name, ...measured, unit: 'ms' };
      });
    },
  },
];
