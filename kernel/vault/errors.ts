/**
 * The vault's failure vocabulary. Damage always names the file and what to do about it, because a
 * vault that silently skips a bad entry would report a partial history as if it were complete.
 */
import { GobstopperError, usageError } from '../errors.js';

/**
 * Damage to one file. The file and the problem are kept apart from the message as well, so a check
 * of the whole vault can name each damaged snapshot's problem without its repair advice.
 */
export class VaultDamagedError extends GobstopperError {
  constructor(
    readonly file: string,
    readonly problem: string,
    repair: string,
    more: Record<string, unknown> = {},
  ) {
    super('vault_damaged', `vault damaged: ${file}: ${problem}; repair required: ${repair}`, { details: { file, ...more } });
  }
}

/** `more`: what the repair names in full where the message shortens it (snapshot ids, files). */
export function vaultDamaged(file: string, problem: string, repair: string, more?: Record<string, unknown>): VaultDamagedError {
  return new VaultDamagedError(file, problem, repair, more);
}

export function insecureVault(file: string, problem: string, repair: string): GobstopperError {
  return new GobstopperError('vault_insecure', `${file}: ${problem}; ${repair}`, { details: { file } });
}

export function snapshotNotFound(sha: string): GobstopperError {
  return new GobstopperError('snapshot_not_found', `no snapshot ${sha} in the vault (gobstopper vault lists them)`);
}

export function badSha(what: string, value: string, rule: string): GobstopperError {
  const shown = value.length > 80 ? `${value.slice(0, 80)}…` : value;
  return usageError('invalid_sha', `${what} ${JSON.stringify(shown)} is not ${rule}`);
}
