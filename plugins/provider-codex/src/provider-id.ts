/** The provider this bundle serves, as hosts and strategies name it. */
export const PROVIDER_ID = 'codex';
export const DISPLAY_NAME = 'Codex';
/** Codex's own compaction, through `codex app-server` JSON-RPC. */
export const NATIVE_CONTROL = 'thread/compact/start';
