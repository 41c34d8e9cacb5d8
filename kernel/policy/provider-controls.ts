/** Each provider's own compaction control, as an orchestrator invokes it on a live session. */
export const BUILTIN_PROVIDERS = ['claude_code', 'codex', 'devin'] as const;
export type BuiltinProvider = (typeof BUILTIN_PROVIDERS)[number];

export const PROVIDER_CONTROLS: Record<BuiltinProvider, string> = {
  codex: 'thread/compact/start',
  claude_code: '/compact',
  devin: '/compact',
};

/**
 * What policy-check tells an orchestrator to do with a live session over the trigger. Claude Code
 * takes `/compact` only from the person at its prompt; from outside, the session is relaunched with
 * auto-compaction, so both ways are named.
 */
export const LIVE_SESSION_CONTROLS: Record<BuiltinProvider, string> = {
  ...PROVIDER_CONTROLS,
  claude_code: '/compact or relaunch --autocompact',
};
