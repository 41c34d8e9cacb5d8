import type { ItemKind, RehearsalKindTallies, RehearsalKindTally } from '../../../schemas/generated/types.js';
import { CHARS_PER_TOKEN } from '../../../sdk/tokens.js';

/** ceil(bytes / 4): the project's token estimate, applied to a whole JSON text (0 bytes are 0 tokens). */
export function tokensOfBytes(bytes: number): number {
  return Math.ceil(bytes / CHARS_PER_TOKEN);
}

export function jsonBytes(value: unknown): number {
  return value === undefined ? 0 : Buffer.byteLength(JSON.stringify(value));
}

/** Counts units and bytes per kind; tokens are derived from the bytes once, at the end. */
export class KindTally {
  private readonly units = new Map<ItemKind, number>();
  private readonly bytes = new Map<ItemKind, number>();

  add(kind: ItemKind, bytes: number): void {
    this.units.set(kind, (this.units.get(kind) ?? 0) + 1);
    this.bytes.set(kind, (this.bytes.get(kind) ?? 0) + bytes);
  }

  get total(): number {
    let n = 0;
    for (const v of this.units.values()) n += v;
    return n;
  }

  toJSON(): RehearsalKindTallies {
    const out: RehearsalKindTallies = {};
    for (const [kind, units] of this.units) {
      const tally: RehearsalKindTally = { units, est_tokens: tokensOfBytes(this.bytes.get(kind) ?? 0) };
      out[kind] = tally;
    }
    return out;
  }
}
