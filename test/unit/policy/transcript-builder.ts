/** Small synthetic transcripts in the normalized shape, for policy and validation tests. */
import type { Transcript, TranscriptItem, UsageSample } from '../../../schemas/generated/types.js';

export interface ItemOptions {
  elidable_bytes?: number | null;
  elidable_parts?: number;
  label?: string;
  tool_use_ids?: string[];
  summary?: string | null;
}

export function item(line_index: number, kind: TranscriptItem['kind'], est_tokens: number, options: ItemOptions = {}): TranscriptItem {
  return {
    line_index,
    kind,
    est_tokens,
    label: options.label ?? kind,
    elidable_bytes: options.elidable_bytes ?? null,
    ...(options.elidable_parts !== undefined ? { elidable_parts: options.elidable_parts } : {}),
    ...(options.tool_use_ids ? { tool_use_ids: options.tool_use_ids } : {}),
    ...(options.summary !== undefined ? { summary: options.summary } : {}),
  };
}

/**
 * A user prompt, then `pairs` tool call/result pairs whose results carry `resultBytes` of elidable
 * output (tokens = bytes / 4), then an assistant reply. Tool results sit on odd lines from 2.
 */
export function toolSession(pairs: number, resultBytes: number): TranscriptItem[] {
  const items: TranscriptItem[] = [item(0, 'user', 50, { summary: 'fix the failing build' })];
  let line = 1;
  for (let i = 0; i < pairs; i++) {
    const id = `toolu_${i}`;
    items.push(item(line++, 'tool_call', 20, { label: 'Bash(ls)', tool_use_ids: [id] }));
    items.push(item(line++, 'tool_result', Math.ceil(resultBytes / 4) + 10, { label: 'Bash', elidable_bytes: resultBytes, tool_use_ids: [id] }));
  }
  items.push(item(line, 'assistant', 40, { summary: 'done' }));
  return items;
}

export function estimatedUsage(overrides: Partial<UsageSample> = {}): UsageSample {
  return { context_tokens: 0, lifetime_input_tokens: 0, lifetime_cached_tokens: 0, context_state: 'absent', lifetime_scope: 'absent', ...overrides };
}

export function transcriptOf(items: TranscriptItem[], options: { provider?: string; usage?: Partial<UsageSample>; session_id?: string } = {}): Transcript {
  return {
    session: { provider: options.provider ?? 'codex', session_id: options.session_id ?? 'sess-1', path: '/tmp/gob-test/session.jsonl' },
    items,
    usage: estimatedUsage(options.usage),
    source_sha256: 'a'.repeat(64),
    bytes: 1000,
    record_count: items.length,
  };
}

/** Lines of the tool results in a toolSession, oldest first. */
export function resultLines(items: readonly TranscriptItem[]): number[] {
  return items.filter((i) => i.kind === 'tool_result').map((i) => i.line_index);
}
