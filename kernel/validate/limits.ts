/** Hard limits on what any plan may contain (the original's admission constants). */
export const MAX_EDITS = 64;
export const MAX_ITEMS = 100_000;
export const MAX_ELIDE_LINES = 100_000;
export const MAX_STUB_TEMPLATE_BYTES = 96;
export const MAX_PER_ITEM_STUB_BYTES = 200;
export const MAX_PROVIDER_CONTROL_BYTES = 256;
export const MAX_CACHE_EDIT_IDS = 100_000;
export const MAX_TOOL_USE_ID_BYTES = 256;
export { MAX_DIGEST_BYTES } from '../../sdk/state-card.js';
