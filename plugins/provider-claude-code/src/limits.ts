/**
 * Read limits. Transcript bytes and record counts are the shared ones (sdk/limits.ts); the per-record
 * cap is this provider's: no single record larger than an API request can ever be context, and a
 * runaway line must be refused before it is parsed.
 */
import type { JsonlReadOptions } from '../../../sdk/jsonl.js';
import { maxRecordBytes as sharedMaxRecordBytes, maxRecords, maxTranscriptBytes, MIB } from '../../../sdk/limits.js';

export const DEFAULT_MAX_RECORD_BYTES = 32 * MIB;

/** GOBSTOPPER_MAX_RECORD_BYTES, default 32 MiB for a Claude Code record. */
export function maxRecordBytes(env: NodeJS.ProcessEnv = process.env): number {
  return sharedMaxRecordBytes(DEFAULT_MAX_RECORD_BYTES, env);
}

export interface ReadLimits {
  maxBytes: number;
  maxRecords: number;
  maxRecordBytes: number;
}

/** The shared reader's options for these limits: a line over the record limit is refused before it is held whole. */
export function jsonlOptions(limits: ReadLimits, hash = true): JsonlReadOptions {
  return { maxBytes: limits.maxBytes, maxRecords: limits.maxRecords, maxLineBytes: limits.maxRecordBytes, hash };
}

/** Limits for one read: explicit params win over the environment. */
export function readLimits(params: { max_bytes?: number; max_records?: number }): ReadLimits {
  return {
    maxBytes: params.max_bytes ?? maxTranscriptBytes(),
    maxRecords: params.max_records ?? maxRecords(),
    maxRecordBytes: maxRecordBytes(),
  };
}
