import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_OUTPUT_TOKEN_LIMIT, offlineCodexConfig, recordedOutputTokenLimit } from '../../../kernel/rehearse/run/codex-layout.js';

const dir = mkdtempSync(join(tmpdir(), 'codex-limit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
function rollout(lines: unknown[], tail = ''): string {
  const path = join(dir, `${n++}.jsonl`);
  writeFileSync(path, lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n') + '\n' + tail);
  return path;
}
const turn = (policy: unknown) => ({ type: 'turn_context', payload: { turn_id: 't', truncation_policy: policy } });

describe('the tool-output budget a rehearsal gives the client', () => {
  it('is the newest recorded policy, in tokens or converted from bytes', () => {
    expect(recordedOutputTokenLimit(rollout([{ type: 'session_meta', payload: {} }, turn({ mode: 'tokens', limit: 10_000 }), turn({ mode: 'tokens', limit: 3_000 })]))).toBe(3_000);
    expect(recordedOutputTokenLimit(rollout([turn({ mode: 'bytes', limit: 10_000 })]))).toBe(2_500);
  });

  it('falls back to the default for no policy, a malformed one, an unreadable line or a missing file', () => {
    expect(recordedOutputTokenLimit(rollout([{ type: 'session_meta', payload: {} }]))).toBe(DEFAULT_OUTPUT_TOKEN_LIMIT);
    expect(recordedOutputTokenLimit(rollout([turn({ mode: 'tokens', limit: -1 }), turn({ mode: 'lines', limit: 5 })]))).toBe(DEFAULT_OUTPUT_TOKEN_LIMIT);
    expect(recordedOutputTokenLimit(rollout(['{"type":"turn_context","payload":{"truncation_policy":{"mode":"tokens","limit":7}'] ))).toBe(DEFAULT_OUTPUT_TOKEN_LIMIT);
    expect(recordedOutputTokenLimit(join(dir, 'absent.jsonl'))).toBe(DEFAULT_OUTPUT_TOKEN_LIMIT);
  });

  it('finds a policy across read chunks and on an unterminated last line', () => {
    const filler = { type: 'response_item', payload: { type: 'message', text: 'x'.repeat(700_000) } };
    expect(recordedOutputTokenLimit(rollout([filler, turn({ mode: 'tokens', limit: 4_000 }), filler, filler]))).toBe(4_000);
    expect(recordedOutputTokenLimit(rollout([filler], JSON.stringify(turn({ mode: 'tokens', limit: 5_000 }))))).toBe(5_000);
  });

  it('is written into the client config', () => {
    expect(parseToml(offlineCodexConfig('openai', 2_000)).tool_output_token_limit).toBe(2_000);
    expect(parseToml(offlineCodexConfig('openai')).tool_output_token_limit).toBeUndefined();
  });
});
