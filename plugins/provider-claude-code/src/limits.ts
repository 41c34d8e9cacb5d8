/**
 * Read limits. Transcript bytes and record counts are the shared ones (sdk/limits.ts); the per-record
 * cap is this provider's: no single record larger than an API request can ever be context, and a
 * runaway line must be refused before it is parsed.
 */
import { maxRecords, maxTranscriptBytes, MIB } from '../../../sdk/limits.js';

export const DEFAULT_MAX_RECORD_BYTES = 32 * MIB;
const MIN_RECORD_BYTES = 1024;

/** GOBSTOPPER_MAX_RECORD_BYTES: 1 KiB up to the transcript limit, default 32 MiB. */
export function maxRecordBytes(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.GOBSTOPPER_MAX_RECORD_BYTES;
  if (raw === undefined || raw === '') return DEFAULT_MAX_RECORD_BYTES;
  if (!/^\d+$/.test(raw)) throw new Error(`GOBSTOPPER_MAX_RECORD_BYTES must be a whole number of bytes, got ${JSON.stringify(raw)}`);
  const value = Number(raw);
  if (value < MIN_RECORD_BYTES) throw new Error(`GOBSTOPPER_MAX_RECORD_BYTES must be at least ${MIN_RECORD_BYTES}, got ${value}`);
  return value;
}

export interface ReadLimits {
  maxBytes: number;
  maxRecords: number;
  maxRecordBytes: number;
}

/** Limits for one read: explicit params win over the environment. */
export function readLimits(params: { max_bytes?: number; max_records?: number }): ReadLimits {
  return {
    maxBytes: params.max_bytes ?? maxTranscriptBytes(),
    maxRecords: params.max_records ?? maxRecords(),
    maxRecordBytes: maxRecordBytes(),
  };
}
