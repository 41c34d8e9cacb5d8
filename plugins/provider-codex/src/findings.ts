/**
 * Resume-validity findings. Codes are stable API: the kernel compares a candidate's findings with
 * its source's, and users script against them. Messages name line indexes and counts, never content.
 */
import type { Finding, Severity } from '../../../sdk/index.js';

export const Code = {
  invalidJson: 'invalid_json',
  invalidUtf8: 'invalid_utf8',
  tornFinalLine: 'torn_final_line',
  blankLine: 'blank_line',
  invalidRecord: 'invalid_record',
  notCodexRollout: 'not_codex_rollout',
  missingSessionMeta: 'missing_session_meta',
  sessionMetaNotFirst: 'session_meta_not_first',
  invalidSessionMeta: 'invalid_session_meta',
  multipleSessionMeta: 'multiple_session_meta',
  compositeFile: 'composite_file',
  invalidHistoryMode: 'invalid_history_mode',
  fileNameIdMismatch: 'file_name_id_mismatch',
  fileNameWithoutId: 'file_name_without_id',
  subagentThread: 'subagent_thread',
  dependsOnParentRollout: 'depends_on_parent_rollout',
  invalidOrdinal: 'invalid_ordinal',
  ordinalNotIncreasing: 'ordinal_not_increasing',
  nonMonotonicOrdinal: 'non_monotonic_ordinal',
  ordinalGap: 'ordinal_gap',
  missingOrdinal: 'missing_ordinal',
  compactedWithoutOrdinal: 'compacted_without_ordinal',
  missingTimestamp: 'missing_timestamp',
  invalidResponseItem: 'invalid_response_item',
  unsupportedResponseItem: 'unsupported_response_item',
  malformedCompacted: 'malformed_compacted',
  invalidCallId: 'invalid_call_id',
  duplicateToolCallId: 'duplicate_tool_call_id',
  duplicateToolResult: 'duplicate_tool_result',
  orphanedToolResult: 'orphaned_tool_result',
  unpairedToolCall: 'unpaired_tool_call',
  mismatchedToolResult: 'mismatched_tool_result',
  findingsTruncated: 'findings_truncated',
} as const;

export type FindingCode = (typeof Code)[keyof typeof Code];

/** A broken file can yield one finding per line; past this many only the count is kept. */
export const MAX_FINDINGS = 1000;

export class FindingList {
  private readonly list: Finding[] = [];
  private dropped = 0;

  add(severity: Severity, code: FindingCode, message: string, lineIndex: number | null = null): void {
    this.push({ severity, code, message, line_index: lineIndex });
  }

  addAll(findings: readonly Finding[]): void {
    for (const f of findings) this.push(f);
  }

  private push(finding: Finding): void {
    if (this.list.length >= MAX_FINDINGS) this.dropped += 1;
    else this.list.push(finding);
  }

  get size(): number {
    return this.list.length;
  }

  /** Findings in line order (file-level ones first), plus a note when some were dropped. */
  toArray(): Finding[] {
    const sorted = [...this.list].sort((a, b) => (a.line_index ?? -1) - (b.line_index ?? -1));
    if (this.dropped > 0) {
      sorted.push({ severity: 'info', code: Code.findingsTruncated, message: `${this.dropped} more findings were not listed`, line_index: null });
    }
    return sorted;
  }

  hasErrors(): boolean {
    return this.list.some((f) => f.severity === 'error');
  }
}
