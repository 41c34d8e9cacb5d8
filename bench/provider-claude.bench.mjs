// Claude Code provider benchmarks, each against a floor measured in the same run. The provider's
// modules and the session generators are bundled from source into a temporary file (the built
// bundle serves the protocol on stdin when loaded, so it cannot be imported).
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

/**
 * The provider's parse and discover plus the synthetic session generators, loaded in-process. Like
 * the plugin's own bundle, this one serves as the provider's scan workers when started as one, and
 * large scans use them (parallel-scan.ts), as they do in the plugin process.
 */
async function loadClaude(dir) {
  const outfile = join(dir, 'claude-bench.cjs');
  await build({
    absWorkingDir: root,
    stdin: {
      contents: [
        "import { isScanWorker, serveScanWorker } from './plugins/provider-claude-code/src/scan-worker.ts';",
        'if (isScanWorker()) serveScanWorker();',
        "export { enableParallelScan } from './plugins/provider-claude-code/src/scan-pool.ts';",
        "export { parseTranscript } from './plugins/provider-claude-code/src/parse.ts';",
        "export { renderCandidate } from './plugins/provider-claude-code/src/render.ts';",
        "export { forgetParsed, parsedSourceCounts } from './plugins/provider-claude-code/src/parsed-source.ts';",
        "export { verifyTranscript } from './plugins/provider-claude-code/src/verify.ts';",
        "export { discoverSessions } from './plugins/provider-claude-code/src/discover.ts';",
        "export { writeBigSession } from './test/fixtures/claude/big-session.ts';",
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
  const claude = createRequire(import.meta.url)(outfile);
  claude.enableParallelScan(outfile);
  return claude;
}

/** The render apply asks for: elide every live result but the newest 8, a state card, a new session id. */
function applyParams(transcript, path, staging) {
  const elidable = transcript.items.filter((i) => i.est_tokens > 0 && (i.elidable_bytes ?? 0) > 0).map((i) => i.line_index);
  return {
    provider_id: 'claude_code',
    path,
    source_sha256: transcript.source_sha256,
    edits: [
      { op: 'elide', line_indexes: elidable.slice(0, -8), stub_template: '[output elided by gobstopper: {bytes} bytes]' },
      { op: 'inject_digest', digest: { goal: 'Keep the checks green', summary: 'Earlier tool output was elided.', covers_items: elidable.length - 8 } },
    ],
    staging_path: staging,
    new_session_id: 'b16b16b1-0000-4000-8000-0000000f0f0f',
    now: new Date().toISOString(),
  };
}

async function withBigSession(fn) {
  const dir = mkdtempSync(join(tmpdir(), 'gob-bench-claude-'));
  try {
    const claude = await loadClaude(dir);
    const path = join(dir, 'b16b16b1-0000-4000-8000-000000000128.jsonl');
    const written = claude.writeBigSession(path, { targetBytes: 128 * MIB, records: 100_000 });
    if (written.records !== 100_000) throw new Error(`generated ${written.records} records, expected 100000`);
    return await fn(claude, path, dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const benchmarks = [
  {
    name: 'provider-claude.parse_128mib_100k_records',
    target: 'ratio <= 2.5',
    async run() {
      const dir = mkdtempSync(join(tmpdir(), 'gob-bench-claude-'));
      try {
        const claude = await loadClaude(dir);
        const path = join(dir, 'b16b16b1-0000-4000-8000-000000000128.jsonl');
        const written = claude.writeBigSession(path, { targetBytes: 128 * MIB, records: 100_000 });
        if (written.records !== 100_000) throw new Error(`generated ${written.records} records, expected 100000`);
        await claude.parseTranscript({ provider_id: 'claude_code', path });
        const measured = await floorAndValue(RUNS, {
          floor: () => readSplitParse(path),
          value: () => claude.parseTranscript({ provider_id: 'claude_code', path }),
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
    name: 'provider-claude.discover_1000x1mib',
    target: 'ratio <= 3, and at most 600 KiB read per session',
    async run() {
      const dir = mkdtempSync(join(tmpdir(), 'gob-bench-claude-'));
      try {
        const claude = await loadClaude(dir);
        const template = join(dir, 'template.jsonl');
        claude.writeBigSession(template, { targetBytes: MIB, records: 700 });
        const text = (await import('node:fs')).readFileSync(template, 'utf8');
        const templateId = 'b16b16b1-0000-4000-8000-000000000128';
        const home = join(dir, 'claude-home');
        const project = join(home, 'projects', '-home-dev-projects-demo');
        mkdirSync(project, { recursive: true });
        const files = [];
        for (let k = 0; k < 1000; k++) {
          const id = `b16b16b1-0000-4000-8000-${String(k).padStart(12, '0')}`;
          const file = join(project, `${id}.jsonl`);
          writeFileSync(file, text.replaceAll(templateId, id));
          files.push(file);
        }
        claude.discoverSessions({ provider_id: 'claude_code', home });
        const measured = await floorAndValue(RUNS, {
          floor: () => statAndTail(files, 512 * 1024),
          value: () => claude.discoverSessions({ provider_id: 'claude_code', home }),
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
  // After a parse of the same bytes, as in apply and eval, a render starts from the parse's tree
  // (render-from-parse.ts); without one (fork, undo) it reads every record, on threads.
  ...[
    { name: 'provider-claude.render_128mib_elide_card_fork', keptParse: true },
    { name: 'provider-claude.render_128mib_elide_card_fork_without_kept_parse', keptParse: false },
  ].map(({ name, keptParse }) => ({
    name,
    target: 'ratio <= 3.5',
    async run() {
      return withBigSession(async (claude, path, dir) => {
        const transcript = await claude.parseTranscript({ provider_id: 'claude_code', path });
        const staging = (r) => join(dir, `candidate-${r}.jsonl`);
        const measured = await floorAndValue(RUNS, {
          before: (r) => {
            writeFileSync(staging(r), '', { mode: 0o600 });
            if (!keptParse) claude.forgetParsed();
          },
          floor: () => readSplitParse(path),
          value: (r) => claude.renderCandidate(applyParams(transcript, path, staging(r))),
          check: (result, r) => {
            if (result.record_count !== 100_002 || result.elided_records < 1000) throw new Error(`render wrote ${result.record_count} records, ${result.elided_records} elided`);
            rmSync(staging(r));
          },
        });
        const reused = claude.parsedSourceCounts().reused;
        if (reused !== (keptParse ? RUNS : 0)) throw new Error(`${reused} of ${RUNS} renders started from the parse`);
        return { name, ...measured, unit: 'ms' };
      });
    },
  })),
  {
    name: 'provider-claude.verify_128mib_100k_records',
    target: 'ratio <= 2.5',
    async run() {
      return withBigSession(async (claude, path) => {
        await claude.verifyTranscript({ provider_id: 'claude_code', path });
        const measured = await floorAndValue(RUNS, {
          floor: () => readSplitParse(path),
          value: () => claude.verifyTranscript({ provider_id: 'claude_code', path }),
          check: (result) => {
            if (result.record_count !== 100_000 || result.findings.some((f) => f.severity === 'error')) throw new Error('verify did not read the session as sound');
          },
        });
        return { name: this.name, ...measured, unit: 'ms' };
      });
    },
  },
];
