/** `vault/pins/<name>.json`: snapshots that prune must keep whatever their age. */
import { join } from 'node:path';
import { validateVaultPin } from '../../schemas/generated/validators.js';
import type { VaultPin } from '../../schemas/generated/types.js';
import { GobstopperError } from '../errors.js';
import { vaultDamaged } from './errors.js';
import { ensureVault, type VaultLayout } from './layout.js';
import { MAX_PIN_BYTES } from './limits.js';
import { FileTooLargeError, fsyncDir, namesIn, publishNewPrivateFile, readPrivateFile } from './private-fs.js';

const PIN_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

export async function writePin(layout: VaultLayout, name: string, manifestSha256: string): Promise<void> {
  if (!PIN_NAME.test(name) || name.startsWith('.')) throw new GobstopperError('invalid_pin', `pin name must be 1-128 of [A-Za-z0-9_.-], got ${JSON.stringify(name)}`);
  const pin: VaultPin = { schema_version: 1, manifest_sha256: manifestSha256 };
  if (!validateVaultPin(pin)) throw new GobstopperError('invalid_pin', 'pin must reference a 64-hex snapshot id');
  await ensureVault(layout);
  const outcome = await publishNewPrivateFile(layout.pins, `${name}.json`, Buffer.from(JSON.stringify(pin) + '\n'));
  if (outcome === 'exists') {
    const existing = await readPin(layout, `${name}.json`);
    if (existing.manifest_sha256 !== manifestSha256) throw new GobstopperError('pin_exists', `pin ${name} already pins another snapshot`);
  }
  await fsyncDir(layout.pins);
}

async function readPin(layout: VaultLayout, fileName: string): Promise<VaultPin> {
  const file = join(layout.pins, fileName);
  const repair = `fix or move ${file} aside (it keeps a snapshot from prune)`;
  let data: Buffer | null;
  try {
    data = await readPrivateFile(file, MAX_PIN_BYTES);
  } catch (error) {
    if (error instanceof FileTooLargeError) throw vaultDamaged(file, 'pin is too large', repair);
    throw error;
  }
  if (!data) throw vaultDamaged(file, 'pin disappeared while it was read', repair);
  let value: unknown;
  try {
    value = JSON.parse(data.toString('utf8'));
  } catch {
    throw vaultDamaged(file, 'pin is not JSON', repair);
  }
  if (!validateVaultPin(value)) throw vaultDamaged(file, 'pin does not match the pin schema', repair);
  return value as VaultPin;
}

/** Every pinned snapshot id; a damaged pin fails closed. */
export async function listPinnedManifests(layout: VaultLayout): Promise<string[]> {
  const pinned: string[] = [];
  for (const name of (await namesIn(layout.pins)).sort()) {
    if (!name.endsWith('.json') || name.startsWith('.')) continue;
    pinned.push((await readPin(layout, name)).manifest_sha256);
  }
  return pinned;
}
