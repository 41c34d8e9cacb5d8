/** Each provider's own compaction control, as an orchestrator invokes it on a live session. */
export const BUILTIN_PROVIDERS = ['claude_code', 'codex', 'devin'] as const;
export type BuiltinProvider = (typeof BUILTIN_PROVIDERS)[number];

export const PROVIDER_CONTROLS: Record<BuiltinProvider, string> = {
  codex: 'thread/compact/start',
  claude_code: '/compact',
  devin: '/compact',
};
