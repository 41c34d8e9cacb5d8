import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { PluginPin, PluginTrustFile } from '../../../schemas/generated/types.js';
import { validatePluginTrustFile } from '../../../schemas/generated/validators.js';
import { GobstopperError } from '../../errors.js';

const FORMAT = 'gobstopper-plugin-trust-v1' as const;
const MAX_TRUST_FILE_BYTES = 4 * 1024 * 1024;

/** The pins of installed bundles. Missing file = nothing installed; a damaged file fails closed. */
export class TrustStore {
  constructor(readonly path: string) {}

  read(): PluginPin[] {
    let text: string;
    try {
      const buffer = readFileSync(this.path);
      if (buffer.length > MAX_TRUST_FILE_BYTES) throw damaged(this.path, 'it is too large');
      text = buffer.toString('utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return [];
      if (code === 'ENOTDIR') throw new GobstopperError('data_dir_invalid', `${dirname(this.path)} is not a directory (a file stands on that path); move the file aside: gobstopper keeps its data, plugins and vault there`);
      if (code === 'EISDIR') throw damaged(this.path, 'it is a directory');
      throw error;
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw damaged(this.path, 'it is not JSON');
    }
    if (!validatePluginTrustFile(value)) throw damaged(this.path, `it does not match its schema at ${validatePluginTrustFile.errors?.[0]?.instancePath || '/'}`);
    return (value as PluginTrustFile).pins;
  }

  find(id: string, version: string): PluginPin | undefined {
    return this.read().find((p) => p.id === id && p.version === version);
  }

  /** Replaces the pin of pin.id@pin.version (or adds it), atomically. */
  put(pin: PluginPin): void {
    const pins = this.read().filter((p) => !(p.id === pin.id && p.version === pin.version));
    pins.push(pin);
    this.write(pins);
  }

  /** Removes pins of id (one version, or all when version is undefined); returns what was removed. */
  remove(id: string, version?: string): PluginPin[] {
    const pins = this.read();
    const removed = pins.filter((p) => p.id === id && (version === undefined || p.version === version));
    if (removed.length > 0) this.write(pins.filter((p) => !removed.includes(p)));
    return removed;
  }

  private write(pins: PluginPin[]): void {
    pins.sort((a, b) => (a.id === b.id ? a.version.localeCompare(b.version) : a.id.localeCompare(b.id)));
    const file: PluginTrustFile = { format: FORMAT, pins };
    mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
    const temp = join(dirname(this.path), `.plugin-trust.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
    const fd = openSync(temp, 'wx', 0o600);
    try {
      writeSync(fd, JSON.stringify(file, null, 2) + '\n');
      fsyncSync(fd);
    } catch (error) {
      closeSync(fd);
      rmSync(temp, { force: true });
      throw error;
    }
    closeSync(fd);
    renameSync(temp, this.path);
  }
}

function damaged(path: string, why: string): GobstopperError {
  return new GobstopperError('trust_file_invalid', `the plugin trust file ${path} is damaged (${why}); fix or remove it and add the plugins again`, {
    details: { path },
  });
}
