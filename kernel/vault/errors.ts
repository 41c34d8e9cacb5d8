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

/**
 * A vault file that is a link, not a regular file, not yours or readable by others. The problem is
 * kept apart as for damage: a file whose repair is simply to delete it (a card file) says that instead.
 */
export class VaultInsecureError extends GobstopperError {
  constructor(
    readonly file: string,
    readonly problem: string,
    repair: string,
  ) {
    super('vault_insecure', `${file}: ${problem}; ${repair}`, { details: { file } });
  }
}

export function insecureVault(file: string, problem: string, repair: string): VaultInsecureError {
  return new VaultInsecureError(file, problem, repair);
}

export function snapshotNotFound(sha: string): GobstopperError {
  return new GobstopperError('snapshot_not_found', `no snapshot ${sha} in the vault (gobstopper vault lists them)`);
}

export function badSha(what: string, value: string, rule: string): GobstopperError {
  const shown = value.length > 80 ? `${value.slice(0, 80)}…` : value;
  return usageError('invalid_sha', `${what} ${JSON.stringify(shown)} is not ${rule}`);
}
