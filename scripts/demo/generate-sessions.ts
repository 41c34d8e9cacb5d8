/**
 * Writes the demo sessions in examples/sessions/ from the project's own fixture builders: one
 * Claude Code session and one paginated Codex rollout, each a realistic debugging story whose early
 * tool outputs hold details (an exact error, a migration name) that compaction will elide and the
 * vault will still find. Run: npx tsx scripts/demo/generate-sessions.ts
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ClaudeSessionBuilder, type Usage } from '../../test/fixtures/claude/session-builder.js';
import { RolloutBuilder, item } from '../../test/fixtures/codex/rollout-builder.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const out = join(root, 'examples', 'sessions');

/** The detail the demo recovers from the vault after the fork has elided it. */
export const PLANTED_ERROR = 'ECONNREFUSED 127.0.0.1:5433 while applying migration 0042_add_invoice_index';

/**
 * What a client reports beside the conversation: its system prompt and tool definitions. The
 * usage each session records is this plus about a token per 4 bytes of the conversation so far,
 * so the context gobstopper reads from the transcript agrees with the records it can elide.
 */
const PROMPT_TOKENS = 9_000;

function listing(label: string, lines: number): string {
  return Array.from({ length: lines }, (_, i) => `${label}:${i + 1}  ${'const value' + i} = compute(${i}, options); // ${'detail '.repeat(6)}`).join('\n');
}

function claudeSession(): string {
  const b = new ClaudeSessionBuilder({ sessionId: '7d3f1c2a-8b4e-4f6a-9c1d-2e5b7a9c0d11', cwd: '/home/dev/projects/invoices' });
  const usage = (): { usage: Usage } => {
    let bytes = 0;
    for (const r of b.records) {
      const message = r.message as { content?: unknown } | undefined;
      if (message?.content !== undefined) bytes += JSON.stringify(message.content).length;
    }
    const context = PROMPT_TOKENS + Math.round(bytes / 4);
    return { usage: { input_tokens: 3, cache_read_input_tokens: context - 2000, cache_creation_input_tokens: 1997, output_tokens: 120 } };
  };
  b.fileHistorySnapshot();
  b.user('The invoice export is slow and the migration fails in CI. Find out why and fix both.');
  b.assistant([{ type: 'text', text: 'I will start with the migration failure, then profile the export.' }], usage());
  b.tools([{ name: 'Bash', input: { command: 'npm run migrate' }, output: `${listing('migrate.log', 40)}\nError: ${PLANTED_ERROR}\n    at Migrator.run (src/db/migrate.ts:88:13)` , isError: true }], usage());
  b.text('The database port in CI differs from local. Checking the config.', usage().usage);
  b.tools([{ name: 'Read', input: { file_path: '/home/dev/projects/invoices/src/db/config.ts' }, output: listing('config.ts', 60) }], usage());
  b.tools([{ name: 'Read', input: { file_path: '/home/dev/projects/invoices/.github/workflows/ci.yml' }, output: listing('ci.yml', 45) }], usage());
  b.text('Decision: read DATABASE_PORT from the environment with 5432 as default.', usage().usage);
  b.tools([{ name: 'Edit', input: { file_path: '/home/dev/projects/invoices/src/db/config.ts', old_string: 'port: 5433', new_string: 'port: Number(process.env.DATABASE_PORT ?? 5432)' }, output: 'The file has been updated.' }], usage());
  b.user('Good. Now the export: it takes 40 seconds for 10k invoices.');
  for (let i = 0; i < 20; i += 1) {
    b.tools(
      [
        { name: 'Read', input: { file_path: `/home/dev/projects/invoices/src/export/part${i}.ts` }, output: listing(`part${i}.ts`, 45) },
        { name: 'Grep', input: { pattern: 'findInvoice', path: 'src' }, output: listing(`grep${i}`, 15) },
      ],
      { preamble: `Looking at export stage ${i}.`, ...usage() },
    );
  }
  b.tools([{ name: 'Bash', input: { command: 'npm run profile:export' }, output: listing('profile', 30) }], usage());
  b.text('The export queries each invoice separately (N+1). Batching the lookups.', usage().usage);
  b.tools([{ name: 'Edit', input: { file_path: '/home/dev/projects/invoices/src/export/collect.ts', old_string: 'for', new_string: 'batch' }, output: 'The file has been updated.' }], usage());
  b.tools([{ name: 'Bash', input: { command: 'npm test' }, output: listing('npm test', 12) + '\n42 passing' }], usage());
  b.tools([{ name: 'Bash', input: { command: 'npm run lint' }, output: '0 problems' }], usage());
  b.tools([{ name: 'Bash', input: { command: 'git status --short' }, output: ' M src/db/config.ts\n M src/export/collect.ts' }], usage());
  b.text('Export now takes 3 seconds; tests pass. TODO: add an index on invoices.customer_id.', usage().usage);
  b.lastPrompt(b.cursor, 'Good. Now the export: it takes 40 seconds for 10k invoices.');
  return b.toJsonl();
}

/** The tokens a Codex turn reports: the prompt, and about one per 4 bytes of the response items so far. */
function codexContext(rollout: string): number {
  let bytes = 0;
  for (const line of rollout.split('\n')) {
    if (!line) continue;
    const { type, payload } = JSON.parse(line) as { type: string; payload: unknown };
    if (type === 'response_item') bytes += JSON.stringify(payload).length;
  }
  return PROMPT_TOKENS + Math.round(bytes / 4);
}

/** A shell call's output as newer Codex builds write it: how the command ended, then its text. */
function ran(output: string, exitCode = 0, seconds = 0.4): string {
  return `Exit code: ${exitCode}\nWall time: ${seconds} seconds\nOutput:\n${output}`;
}

function codexRollout(): string {
  const b = new RolloutBuilder({ paginated: true, id: '019d2e4a-7c1b-7f30-9a52-3b8c6d1e0f77', cwd: '/home/dev/projects/billing-api' });
  const total = { input: 0, cached: 0, output: 0 };
  const turn = (output: number) => {
    const input = codexContext(b.text());
    const last = { input, cached: input - 2_000, output };
    total.input += last.input;
    total.cached += last.cached;
    total.output += last.output;
    b.tokenCount(last, { ...total }, 272_000);
  };
  b.sessionMeta().preamble().turnContext('gpt-5.6').tokenCount(null);
  b.user('Add rate limiting to the public API and make sure the load test passes.\nDo not change the response format: clients parse it.');
  b.reasoning('Find where requests enter the router');
  b.shell('call_1', 'rg -n "router.use" src', ran(listing('rg', 30)));
  b.shell('call_2', 'npm run loadtest', ran(`${listing('loadtest', 50)}\nFAIL: p99 latency 2300ms > 500ms budget`, 1, 41.2));
  turn(400);
  for (let i = 0; i < 16; i += 1) {
    b.shell(`call_r${i}`, `cat src/routes/route${i}.ts`, ran(listing(`route${i}.ts`, 60), 0, 0.1));
    b.patch(`call_p${i}`, [`Success. Updated the following files:\nM src/routes/route${i}.ts\n${listing('patch', 8)}`], `*** Begin Patch\n*** Update File: src/routes/route${i}.ts\n@@\n-router.get(path, handler);\n+router.get(path, limited(handler));\n*** End Patch`);
    if (i % 4 === 3) turn(500);
  }
  b.assistant('Rate limiting is in place (token bucket, 100 req/s per key). The load test passes with p99 310ms.');
  b.response(item.user('Thanks. Keep the limit configurable per plan.'));
  b.assistant('Noted: the limit will come from the plan table.\n- [ ] read the per-plan limit from the plans table');
  turn(300);
  return b.text();
}

function write(rel: string, text: string): void {
  const path = join(out, rel);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
  console.log(`wrote examples/sessions/${rel} (${Buffer.byteLength(text)} bytes)`);
}

write('claude/-home-dev-projects-invoices/7d3f1c2a-8b4e-4f6a-9c1d-2e5b7a9c0d11.jsonl', claudeSession());
write('codex/2026/02/23/rollout-2026-02-23T11-54-34-019d2e4a-7c1b-7f30-9a52-3b8c6d1e0f77.jsonl', codexRollout());
