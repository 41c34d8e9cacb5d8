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

/** The control a built-in provider compacts with; null for a provider gobstopper does not know. */
export function nativeControlOf(provider: string): string | null {
  return (PROVIDER_CONTROLS as Record<string, string | undefined>)[provider] ?? null;
}

/**
 * How a provider_compact edit reads for people. Its `control` is a strategy plugin's own text: the
 * tool names the provider's control in its own voice and shows other wording only quoted, as what
 * the strategy wrote, so that a plugin cannot put an instruction in the tool's mouth.
 */
export function controlWords(provider: string | null, control: string): string {
  const native = provider === null ? null : nativeControlOf(provider);
  const named = native === null ? null : (TYPED_CONTROLS[provider as BuiltinProvider] ?? native);
  if (native !== null && control === native) return named!;
  const quoted = `the strategy's words: ${JSON.stringify(control)}`;
  return named === null ? quoted : `${named}; ${quoted}`;
}

/**
 * How a person reaches a control that is an API method rather than something to type: Codex's
 * `thread/compact/start` is what its app-server takes, and `/compact` what its prompt takes.
 */
const TYPED_CONTROLS: Partial<Record<BuiltinProvider, string>> = {
  codex: '/compact at the Codex prompt, or thread/compact/start over its app-server',
};
