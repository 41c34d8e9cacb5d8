// Vault benchmarks on a generated 128 MiB session, each against a floor measured in the same run.
// They import the compiled kernel from dist/ (run after the build). A smoke run
// (bench/lib/scale.mjs) uses 2 MiB, one run each.
//
// Floors:
// - snapshot: reading + sha256 of the file, plus a durable copy of it (copyFileSync + fsync). A
//   snapshot must be durable, so the copy it is compared with is too.
// - search: reading every chunk of the stored snapshot and sha256-verifying it (each chunk against
//   its name and the whole against source_sha256), the integrity work any verified read must do.
import { createHash } from 'node:crypto';
import { closeSync, copyFileSync, fsyncSync, mkdtempSync, openSync, readFileSync, readSync, rmSync, writeSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MIB, floorAndValue, median, nowMs } from './lib/measure.mjs';
import { scaled } from './lib/scale.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = (path) => import(join(root, 'dist', path));
const SIZE_MIB = scaled(128, 2);
const RUNS = scaled(3, 1);

/** A transcript-shaped JSONL file: user turns, assistant text, long escaped tool outputs. */
function writeSession(path, bytes) {
  const fd = openSync(path, 'w', 0o600);
  let written = 0;
  let i = 0;
  const pending = [];
  let pendingBytes = 0;
  const flush = () => {
    const buf = Buffer.from(pending.join(''));
    writeSync(fd, buf);
    written += buf.length;
    pending.length = 0;
    pendingBytes = 0;
  };
  while (written + pendingBytes < bytes) {
    const sid = '0199a2f1-aaaa-4bbb-8ccc-123456789abc';
    const kind = i % 3;
    let record;
    if (kind === 0) record = { type: 'user', sessionId: sid, uuid: `u${i}`, message: { role: 'user', content: `Please check step ${i}: run the tests for src/module-${i % 97}.ts and fix what fails.` } };
    else if (kind === 1) record = { type: 'assistant', sessionId: sid, uuid: `a${i}`, message: { role: 'assistant', content: [{ type: 'text', text: `Running the tests for module ${i % 97}. I will report the failures — “quoted” and ünïcode.` }, { type: 'tool_use', id: `toolu_${i}`, name: 'Bash', input: { command: `npm test -- module-${i % 97}` } }] } };
    else {
      const lines = [];
      for (let l = 0; l < 40 + (i % 60); l++) lines.push(`  at Object.<anonymous> (src/module-${(i + l) % 97}.ts:${l}:${i % 80}) "frame ${l}"\tok`);
      record = { type: 'user', sessionId: sid, uuid: `t${i}`, message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_${i - 1}`, content: lines.join('\n') }] } };
    }
    const line = JSON.stringify(record) + '\n';
    pending.push(line);
    pendingBytes += Buffer.byteLength(line);
    if (pendingBytes > 4 * MIB) flush();
    i += 1;
  }
  flush();
  fsyncSync(fd);
  closeSync(fd);
}

function sha256File(path) {
  const hash = createHash('sha256');
  const fd = openSync(path, 'r');
  const buf = Buffer.allocUnsafe(MIB);
  let n;
  while ((n = readSync(fd, buf, 0, MIB, null)) > 0) hash.update(buf.subarray(0, n));
  closeSync(fd);
  return hash.digest('hex');
}

function durableCopy(from, to) {
  copyFileSync(from, to);
  const fd = openSync(to, 'r');
  fsyncSync(fd);
  closeSync(fd);
}

async function withSession(body) {
  const dir = mkdtempSync(join(tmpdir(), 'gob-vault-bench-'));
  try {
    const source = join(dir, 'session.jsonl');
    writeSession(source, SIZE_MIB * MIB);
    return await body(dir, source);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function freshVault(dir, n) {
  const { vaultLayoutAt } = await dist('kernel/vault/layout.js');
  return vaultLayoutAt(join(dir, `vault-${n}`));
}

export const benchmarks = [
  {
    name: `vault.snapshot_${SIZE_MIB}mib`,
    target: 'ratio <= 2',
    async run() {
      const { snapshotFile } = await dist('kernel/vault/snapshot.js');
      return withSession(async (dir, source) => {
        let layout;
        const measured = await floorAndValue(RUNS, {
          before: async (r) => (layout = await freshVault(dir, r)),
          floor: (r) => {
            sha256File(source);
            durableCopy(source, join(dir, `copy-${r}`));
          },
          value: () => snapshotFile(layout, { path: source, sessionId: 'bench', provider: 'claude_code', strategy: 'snapshot' }),
          check: (_snapshot, r) => {
            rmSync(join(dir, `copy-${r}`));
            rmSync(layout.root, { recursive: true, force: true });
          },
        });
        return { name: this.name, ...measured, unit: 'ms' };
      });
    },
  },
  {
    name: 'vault.append_1mib_new_chunk_bytes',
    target: 'value <= 2 MiB (ratio <= 1)',
    async run() {
      const { snapshotFile } = await dist('kernel/vault/snapshot.js');
      return withSession(async (dir, source) => {
        const layout = await freshVault(dir, 'append');
        await snapshotFile(layout, { path: source, sessionId: 'bench', provider: 'claude_code', strategy: 'snapshot' });
        // Append 1 MiB of whole records (the session's first ones, again).
        const head = Buffer.allocUnsafe(MIB + 64 * 1024);
        const fd = openSync(source, 'r');
        const got = readSync(fd, head, 0, head.length, 0);
        closeSync(fd);
        let cut = MIB;
        while (cut < got && head[cut - 1] !== 0x0a) cut += 1;
        appendFileSync(source, head.subarray(0, cut));
        const { stored } = await snapshotFile(layout, { path: source, sessionId: 'bench', provider: 'claude_code', strategy: 'snapshot' });
        return { name: this.name, value: stored.newChunkBytes, floor: 2 * MIB, unit: 'bytes' };
      });
    },
  },
  {
    name: `vault.search_snapshot_${SIZE_MIB}mib`,
    target: 'ratio <= 3',
    async run() {
      const { snapshotFile } = await dist('kernel/vault/snapshot.js');
      const { searchSnapshot } = await dist('kernel/vault/search.js');
      return withSession(async (dir, source) => {
        const layout = await freshVault(dir, 'search');
        const { entry } = await snapshotFile(layout, { path: source, sessionId: 'bench', provider: 'claude_code', strategy: 'snapshot' });
        const manifest = JSON.parse(readFileSync(join(layout.manifests, entry.sha256), 'utf8'));
        const values = [];
        const floors = [];
        for (let r = 0; r < RUNS; r++) {
          let t = nowMs();
          const whole = createHash('sha256');
          for (const chunk of manifest.chunks) {
            const bytes = readFileSync(join(layout.chunks, chunk));
            if (createHash('sha256').update(bytes).digest('hex') !== chunk) throw new Error('floor: chunk mismatch');
            whole.update(bytes);
          }
          if (whole.digest('hex') !== manifest.source_sha256) throw new Error('floor: source mismatch');
          floors.push(nowMs() - t);

          // One query that occurs in every tool output, one that occurs nowhere.
          t = nowMs();
          const hits = await searchSnapshot(layout, entry.sha256, 'src/module-42.ts', 50);
          values.push(nowMs() - t);
          if (hits.matched_records === 0) throw new Error('search found nothing');
          t = nowMs();
          const none = await searchSnapshot(layout, entry.sha256, 'no such text anywhere', 50);
          values.push(nowMs() - t);
          if (none.matched_records !== 0) throw new Error('search found a string that is not there');
        }
        return { name: this.name, value: median(values), floor: median(floors), unit: 'ms' };
      });
    },
  },
];
