/** The vault's fixed sizes and bounds (the original's numbers; see docs/design.md). */
import { MIB } from '../../sdk/limits.js';

/** Sources are cut at fixed 1 MiB offsets, so an appended session shares every earlier chunk. */
export const CHUNK_BYTES = MIB;
export const MANIFEST_SCHEMA_VERSION = 3;
/** A manifest lists ≤ 8192 chunk ids at the 8 GiB ceiling (≈ 560 KiB); 16 MiB is a hard read cap. */
export const MAX_MANIFEST_BYTES = 16 * MIB;
export const MAX_INDEX_BYTES = 128 * MIB;
export const MAX_INDEX_LINE_BYTES = 64 * 1024;
export const MAX_RECEIPT_BYTES = 64 * 1024;
export const MAX_PIN_BYTES = 4096;
export const MAX_SESSION_ID_BYTES = 256;
export const MAX_PATH_BYTES = 4096;
/** Default snapshots kept per (provider, path, session_id) stream by `prune`. */
export const DEFAULT_PRUNE_KEEP = 10;
