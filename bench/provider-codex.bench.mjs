// Codex provider benchmarks (bench/lib/provider-suite.mjs measures them): the provider's modules
// and the rollout generators bundled from source.
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { floorAndValue, MIB, readSplitParse } from './lib/measure.mjs';
import { LARGE, loadBundle, MANY, providerBenchmarks } from './lib/provider-suite.mjs';
import { scaled } from './lib/scale.mjs';

const ROLLOUT_ID = '019c9999-0000-7000-8000-000000000128';

const suite = providerBenchmarks({
  name: 'codex',
  id: 'codex',
  newSessionId: '019c9999-0000-7000-8000-0000000f0f0f',
  async load(dir) {
    const { module } = await loadBundle(dir, 'codex', [
      "export { parse } from './plugins/provider-codex/src/parse.ts';",
      "export { render } from './plugins/provider-codex/src/render.ts';",
      "export { verify } from './plugins/provider-codex/src/verify.ts';",
      "export { discover } from './plugins/provider-codex/src/discover.ts';",
      "export { writeLargeRollout } from './test/fixtures/codex/large-rollout.ts';",
      "export { RolloutBuilder, filler, sessionsDir } from './test/fixtures/codex/rollout-builder.ts';",
    ]);
    return module;
  },
  writeLarge(codex, dir) {
    const path = join(dir, `rollout-2026-02-23T12-54-34-${ROLLOUT_ID}.jsonl`);
    const written = codex.writeLargeRollout(path, { records: LARGE.records, bytes: LARGE.mib * MIB, paginated: true, id: ROLLOUT_ID });
    if (written.records !== LARGE.records) throw new Error(`generated ${written.records} records, expected ${LARGE.records}`);
    return path;
  },
  writeMany(codex, dir) {
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
    for (let k = 0; k < MANY; k++) {
      const id = `019c0000-0000-7000-8000-${String(k).padStart(12, '0')}`;
      const file = join(day, `rollout-2026-02-23T12-00-00-${id}.jsonl`);
      writeFileSync(file, text.replace(template.id, id));
      files.push(file);
    }
    return { home, files };
  },
  parse: (codex, params) => codex.parse(params),
  render: (codex, params) => codex.render(params),
  verify: (codex, params) => codex.verify(params),
  discover: (codex, params) => codex.discover(params),
  recordsAdded: 1,
  targets: { parse: 2.5, discover: 3, render: 2, verify: 2 },
});

const HISTORY_OUTPUTS = scaled(10_000, 500);

/**
 * One compacted record whose replacement history holds 10,000 tool outputs of 3 KB (a smoke run:
 * 500), all elided: the render finds every output of that ~30 MB line in one walk
 * (member-splice.ts), so it stays a small multiple of parsing the file, however many outputs one
 * line holds.
 */
const manyOutputsInOneLine = {
  name: `provider-codex.render_one_line_${HISTORY_OUTPUTS}_elided_outputs`,
  target: 'ratio <= 4',
  async run() {
    const dir = mkdtempSync(join(tmpdir(), 'gob-bench-codex-history-'));
    try {
      const { module: codex } = await loadBundle(dir, 'codex-history', [
        "export { render } from './plugins/provider-codex/src/render.ts';",
        "export { RolloutBuilder, filler, item } from './test/fixtures/codex/rollout-builder.ts';",
      ]);
      const b = new codex.RolloutBuilder({ paginated: true, id: ROLLOUT_ID });
      b.sessionMeta().user('go on');
      const history = [];
      for (let i = 0; i < HISTORY_OUTPUTS; i += 1) history.push(codex.item.functionCall(`h${i}`, 'shell', { command: ['ls'] }), codex.item.functionOutput(`h${i}`, `out ${i} ${codex.filler(3000)}`));
      const line = b.nextLine;
      b.compacted(history);
      b.user('and now?');
      const path = join(dir, `rollout-2026-02-23T12-54-34-${ROLLOUT_ID}.jsonl`);
      writeFileSync(path, b.text());
      const sha = createHash('sha256').update(readFileSync(path)).digest('hex');
      let n = 0;
      const render = () => {
        const staging = join(dir, `staging-${n++}.jsonl`);
        writeFileSync(staging, '');
        const edits = [{ op: 'elide', line_indexes: [line], stub_template: '[output elided by gobstopper: {bytes} bytes]' }];
        return codex.render({ provider_id: 'codex', path, source_sha256: sha, edits, staging_path: staging, new_session_id: null, now: new Date().toISOString() });
      };
      await render();
      const measured = await floorAndValue(scaled(5, 1), {
        floor: () => readSplitParse(path),
        value: render,
        check: (result) => {
          if (result.elided_records !== 1) throw new Error(`render elided ${result.elided_records} records, expected 1`);
        },
      });
      return { name: this.name, ...measured, unit: 'ms' };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
};

export const benchmarks = [...suite, manyOutputsInOneLine];
