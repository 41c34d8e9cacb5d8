/**
 * The closed code an events-log line gives a failed apply. The log carries codes, never messages,
 * so a code is all a reader of `gobstopper events` has to tell a fork that failed its own check
 * from a disk that filled or a vault that could not be written (`io`) from anything else.
 */
import type { EventErrorCode } from '../../schemas/generated/types.js';
import { GobstopperError } from '../errors.js';
import { isFilesystemCode } from '../filesystem-codes.js';

/** Vault refusals that are the disk's or the vault's state, not the session's. */
const VAULT_IO_CODES = new Set(['vault_full', 'vault_insecure', 'vault_damaged']);

export function failedApplyCode(error: unknown): EventErrorCode {
  const code = (error as { code?: unknown } | null)?.code;
  if (error instanceof GobstopperError && code === 'verification_failed') return 'verification_failed';
  if (isFilesystemCode(code) || (typeof code === 'string' && VAULT_IO_CODES.has(code))) return 'io';
  return 'apply_failed';
}
