// Claude Code provider benchmarks (bench/lib/provider-suite.mjs measures them): the provider's
// modules and the session generators bundled from source. Like the plugin's own bundle, this one
// serves as the provider's scan workers when started as one, and large reads use them.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MIB } from './lib/measure.mjs';
import { LARGE, loadBundle, MANY, providerBenchmarks } from './lib/provider-suite.mjs';

const TEMPLATE_ID = 'b16b16b1-0000-4000-8000-000000000128';

export const benchmarks = providerBenchmarks({
  name: 'claude',
  id: 'claude_code',
  newSessionId: 'b16b16b1-0000-4000-8000-0000000f0f0f',
  async load(dir) {
    const { file, module } = await loadBundle(dir, 'claude', [
      "import { isScanWorker, serveScanWorker } from './plugins/provider-claude-code/src/scan-worker.ts';",
      'if (isScanWorker()) serveScanWorker();',
      "export { enableParallelScan } from './plugins/provider-claude-code/src/scan-pool.ts';",
      "export { parseTranscript } from './plugins/provider-claude-code/src/parse.ts';",
      "export { renderCandidate } from './plugins/provider-claude-code/src/render.ts';",
      "export { forgetParsed, parsedSourceCounts } from './plugins/provider-claude-code/src/parsed-source.ts';",
      "export { verifyTranscript } from './plugins/provider-claude-code/src/verify.ts';",
      "export { discoverSessions } from './plugins/provider-claude-code/src/discover.ts';",
      "export { writeBigSession } from './test/fixtures/claude/big-session.ts';",
    ]);
    module.enableParallelScan(file);
    return module;
  },
  writeLarge(claude, dir) {
    const path = join(dir, `${TEMPLATE_ID}.jsonl`);
    const written = claude.writeBigSession(path, { targetBytes: LARGE.mib * MIB, records: LARGE.records });
    if (written.records !== LARGE.records) throw new Error(`generated ${written.records} records, expected ${LARGE.records}`);
    return path;
  },
  writeMany(claude, dir) {
    const template = join(dir, 'template.jsonl');
    claude.writeBigSession(template, { targetBytes: MIB, records: 700 });
    const text = readFileSync(template, 'utf8');
    const home = join(dir, 'claude-home');
    const project = join(home, 'projects', '-home-dev-projects-demo');
    mkdirSync(project, { recursive: true });
    const files = [];
    for (let k = 0; k < MANY; k++) {
      const id = `b16b16b1-0000-4000-8000-${String(k).padStart(12, '0')}`;
      const file = join(project, `${id}.jsonl`);
      writeFileSync(file, text.replaceAll(TEMPLATE_ID, id));
      files.push(file);
    }
    return { home, files };
  },
  parse: (claude, params) => claude.parseTranscript(params),
  render: (claude, params) => claude.renderCandidate(params),
  verify: (claude, params) => claude.verifyTranscript(params),
  discover: (claude, params) => claude.discoverSessions(params),
  recordsAdded: 2,
  targets: { parse: 2.5, discover: 3, render: 3.5, verify: 2.5 },
  // After a parse of the same bytes, as in apply and eval, a render starts from the parse's tree
  // (render-from-parse.ts); without one (fork, undo) it reads every record, on threads.
  renderForms: [
    { name: 'elide_card_fork', check: (claude, runs) => startedFromParse(claude, runs) },
    {
      name: 'elide_card_fork_without_kept_parse',
      before: (claude) => claude.forgetParsed(),
      check: (claude) => startedFromParse(claude, 0),
    },
  ],
});

function startedFromParse(claude, expected) {
  const { reused } = claude.parsedSourceCounts();
  if (reused !== expected) throw new Error(`${reused} renders started from the parse, expected ${expected}`);
}
