/**
 * Reading a source rollout safely: limits from the request or the environment, library errors
 * turned into protocol errors, and a file that changes or disappears while it is read reported as
 * such instead of yielding a result for bytes that no longer exist.
 */
import { statSync, type Stats } from 'node:fs';
import { resolve } from 'node:path';
import { JsonlInputError, JsonlLimitError, MIB, namingFile, maxRecordBytes as sharedMaxRecordBytes, invalidInput, limitExceeded, maxRecords, maxTranscriptBytes, sourceChanged } from '../../../sdk/index.js';
import type { ScanLimits } from './scan.js';

/**
 * Longest record read. Codex keeps whole tool outputs in a rollout (tens of MiB are real), so the
 * default is generous; the cap exists so a runaway line is refused before it is held whole.
 */
export const DEFAULT_MAX_RECORD_BYTES = 64 * MIB;

/** GOBSTOPPER_MAX_RECORD_BYTES, default 64 MiB for a Codex record. */
export function maxRecordBytes(env: NodeJS.ProcessEnv = process.env): number {
  return sharedMaxRecordBytes(DEFAULT_MAX_RECORD_BYTES, env);
}

export function resolveLimits(params: { max_bytes?: number; max_records?: number }): ScanLimits {
  try {
    return { maxBytes: params.max_bytes ?? maxTranscriptBytes(), maxRecords: params.max_records ?? maxRecords(), maxLineBytes: maxRecordBytes() };
  } catch (error) {
    throw invalidInput((error as Error).message);
  }
}

function errno(error: unknown): string | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * A protocol error already (numeric JSON-RPC code). `instanceof PluginError` cannot tell: the
 * JSON-RPC library resets the prototype of every ResponseError to its own base class.
 */
function isProtocolError(error: unknown): error is Error {
  return error instanceof Error && typeof (error as { code?: unknown }).code === 'number';
}

/** stat that explains the common failures in one line. */
export function statSource(path: string): Stats {
  try {
    const st = statSync(path);
    if (!st.isFile()) throw invalidInput(`${path} is not a regular file`);
    return st;
  } catch (error) {
    if (isProtocolError(error)) throw error;
    if (errno(error) === 'ENOENT') throw invalidInput(`${path} does not exist`);
    if (errno(error) === 'EACCES') throw invalidInput(`${path} is not readable`);
    throw invalidInput(`${path} cannot be read (${errno(error) ?? 'error'})`);
  }
}

export function absolutePath(path: string): string {
  return resolve(path);
}

/** Maps what reading can throw onto protocol errors. */
export function toPluginError(error: unknown, path: string): Error {
  if (isProtocolError(error)) return error;
  if (error instanceof JsonlLimitError) return limitExceeded(namingFile(path, error.message));
  if (error instanceof JsonlInputError) return invalidInput(namingFile(path, error.message));
  const code = errno(error);
  if (code === 'ENOENT') return sourceChanged(`${path} disappeared while it was read`);
  if (code === 'ELOOP') return invalidInput(`${path} is a symbolic link; give the real path`);
  if (code === 'EISDIR') return invalidInput(`${path} is a directory`);
  if (code !== undefined) return invalidInput(`${path} cannot be read (${code})`);
  return error instanceof Error ? error : new Error(String(error));
}

/**
 * Runs `read` on the file and checks afterwards that the path still names the same, unchanged file
 * and that exactly the size seen before was read. What `read` throws comes out as it was (callers
 * map it with toPluginError): verify reports the reader's refusals as findings.
 */
export async function readStable<T>(path: string, read: (before: Stats) => Promise<T>, bytesRead: (result: T) => number): Promise<{ result: T; stat: Stats }> {
  const before = statSource(path);
  const result = await read(before);
  let after: Stats;
  try {
    after = statSync(path);
  } catch {
    throw sourceChanged(`${path} disappeared while it was read`);
  }
  if (after.ino !== before.ino || after.dev !== before.dev || after.size !== before.size || after.mtimeMs !== before.mtimeMs || bytesRead(result) !== before.size) {
    throw sourceChanged(`${path} changed while it was read`);
  }
  return { result, stat: after };
}
