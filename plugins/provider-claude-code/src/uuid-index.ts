/**
 * uuid -> line of the latest record holding it, over a whole scanned table, built once all rows
 * are read. It does what a Map<string, number> filled in line order would, but from hashes
 * computed while each line was parsed (so on whichever thread parsed it): a Map would hash every
 * uuid and parent string again on the thread that joins the rows, and a 100,000-record session
 * has 200,000 of them.
 */
import type { RecordTable } from './record-table.js';

/** 32-bit FNV-1a of a string's UTF-16 code units. */
export function idHash(s: string): number {
  let h = 0x811c9dc5 | 0;
  for (let i = 0; i < s.length; i += 1) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h;
}

/** What the live branch asks of a uuid index; a Map<string, number> is one too. */
export interface UuidLookup {
  get(uuid: string): number | undefined;
}

export class UuidIndex implements UuidLookup {
  /** Open addressing: row + 1 of the latest record holding each uuid, 0 for an empty slot. */
  private readonly slots: Int32Array;
  private readonly mask: number;

  constructor(private readonly t: RecordTable) {
    let size = 16;
    while (size < t.length * 2) size *= 2;
    this.slots = new Int32Array(size);
    this.mask = size - 1;
  }

  /** The slot holding `uuid`, or the empty slot where it would go. */
  private slot(uuid: string, hash: number): number {
    const { slots, mask, t } = this;
    let s = hash & mask;
    for (;;) {
      const row = slots[s]! - 1;
      if (row < 0 || (t.uuidHash[row] === hash && t.uuid[row] === uuid)) return s;
      s = (s + 1) & mask;
    }
  }

  /** Notes that row `i` holds its uuid; returns the row that held it before, or -1. */
  add(i: number): number {
    const s = this.slot(this.t.uuid[i]!, this.t.uuidHash[i]!);
    const before = this.slots[s]! - 1;
    this.slots[s] = i + 1;
    return before;
  }

  /** The row holding `uuid`, when its hash is known. */
  find(uuid: string, hash: number): number | undefined {
    const row = this.slots[this.slot(uuid, hash)]! - 1;
    return row < 0 ? undefined : row;
  }

  get(uuid: string): number | undefined {
    return this.find(uuid, idHash(uuid));
  }
}

/**
 * Indexes every row's uuid in line order, and finds each row's parent among the rows up to it
 * (sharing the parent's own uuid string), as a reader noting them line by line does.
 */
export function indexUuids(t: RecordTable): { index: UuidIndex; duplicates: Array<{ line: number; firstLine: number }> } {
  const index = new UuidIndex(t);
  const duplicates: Array<{ line: number; firstLine: number }> = [];
  for (let i = 0; i < t.length; i += 1) {
    if (t.uuid[i] !== null) {
      const before = index.add(i);
      if (before >= 0) duplicates.push({ line: i, firstLine: before });
    }
    const parent = t.parentUuid[i];
    if (parent !== null) {
      const p = index.find(parent, t.parentHash[i]!);
      if (p !== undefined) {
        t.parentLine[i] = p;
        t.parentUuid[i] = t.uuid[p]!;
      }
    }
  }
  return { index, duplicates };
}
