/** Input limits shared by providers and the host (the original's numbers). */

export const MIB = 1024 * 1024;
export const DEFAULT_MAX_TRANSCRIPT_BYTES = 512 * MIB;
export const DEFAULT_MAX_RECORDS = 100_000;
export const MIN_TRANSCRIPT_LIMIT_BYTES = 1024;
export const MAX_TRANSCRIPT_LIMIT_BYTES = 8 * 1024 * MIB;

/** A limit variable that is set to something unusable; `code` is what a CLI error carries. */
export class LimitEnvironmentError extends Error {
  readonly code = 'invalid_environment';
}

function envInteger(name: string, min: number, max: number, fallback: number, env: NodeJS.ProcessEnv): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new LimitEnvironmentError(`${name} must be a whole number of ${name.endsWith('BYTES') ? 'bytes' : 'records'}, got ${JSON.stringify(raw)}`);
  const value = Number(raw);
  // Quoted as written: past 2^53 the number read is not the one typed (99999999999999999999 reads as 1e20).
  if (value < min || value > max) throw new LimitEnvironmentError(`${name} must be between ${min} and ${max}, got ${raw}`);
  return value;
}

/** GOBSTOPPER_MAX_TRANSCRIPT_BYTES: 1 KiB to 8 GiB, default 512 MiB. */
export function maxTranscriptBytes(env: NodeJS.ProcessEnv = process.env): number {
  return envInteger('GOBSTOPPER_MAX_TRANSCRIPT_BYTES', MIN_TRANSCRIPT_LIMIT_BYTES, MAX_TRANSCRIPT_LIMIT_BYTES, DEFAULT_MAX_TRANSCRIPT_BYTES, env);
}

/**
 * GOBSTOPPER_MAX_RECORDS: 1 to 100,000 (the default). It can only be lowered: plans, transcripts and
 * their schemas are bounded at 100,000 items.
 */
export function maxRecords(env: NodeJS.ProcessEnv = process.env): number {
  return envInteger('GOBSTOPPER_MAX_RECORDS', 1, DEFAULT_MAX_RECORDS, DEFAULT_MAX_RECORDS, env);
}

/**
 * GOBSTOPPER_MAX_RECORD_BYTES: the longest single record a provider reads, at least 1 KiB. Each
 * provider passes its own default (what one record of its format can reasonably hold), so a runaway
 * line is refused before it is held whole.
 */
export function maxRecordBytes(defaultBytes: number, env: NodeJS.ProcessEnv = process.env): number {
  return envInteger('GOBSTOPPER_MAX_RECORD_BYTES', MIN_TRANSCRIPT_LIMIT_BYTES, MAX_TRANSCRIPT_LIMIT_BYTES, defaultBytes, env);
}

/** A session updated within this many seconds is live and is never rewritten. */
export const HOT_SECS = 180;

/**
 * Reads every limit variable once, so a bad value is refused by the host before any plugin reads it
 * (a provider would otherwise fail mid-call, and the error would read as the plugin's).
 */
export function checkLimitEnvironment(env: NodeJS.ProcessEnv = process.env): void {
  maxTranscriptBytes(env);
  maxRecords(env);
  maxRecordBytes(MIN_TRANSCRIPT_LIMIT_BYTES, env);
}
