/** How much a tool's output tends to matter later: reads and edits carry facts, shell chatter rarely does. */

const HIGH = new Set(['read_file', 'view', 'view_range', 'search_files', 'glob', 'grep', 'apply', 'replace', 'edit']);
const LOW = new Set(['bash', 'ls', 'cat', 'echo', 'pwd', 'which', 'find', 'wc', 'head', 'tail', 'sort', 'uniq']);

export function toolImportance(toolName: string): number {
  if (HIGH.has(toolName)) return 1;
  if (LOW.has(toolName)) return 0;
  return 0.5;
}
