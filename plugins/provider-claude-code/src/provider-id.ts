/** This provider's id and the facts the host shows about it. */
export const PROVIDER_ID = 'claude_code';
export const DISPLAY_NAME = 'Claude Code';
/** Claude Code compacts a session itself with this command. */
export const NATIVE_CONTROL = '/compact';
