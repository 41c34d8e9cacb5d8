/**
 * What a Claude JSONL file is. Sub-agent transcripts (`<id>/subagents/agent-*.jsonl`, or any file
 * made only of sidechain records) are refused by the client as sessions; a composite is a collection
 * of record shapes whose client versions were replaced by placeholders, not a conversation anyone
 * can resume.
 */
import { basename, dirname, sep } from 'node:path';
import type { SessionKind } from '../../../schemas/generated/types.js';

export function isSubagentPath(path: string): boolean {
  return basename(path).startsWith('agent-') || dirname(path).split(sep).includes('subagents');
}

export function sessionKind(path: string, facts: { sidechainOnly: boolean; versionAnomaly: boolean }): SessionKind {
  if (isSubagentPath(path)) return 'subagent';
  if (facts.versionAnomaly) return 'composite';
  if (facts.sidechainOnly) return 'subagent';
  return 'session';
}
