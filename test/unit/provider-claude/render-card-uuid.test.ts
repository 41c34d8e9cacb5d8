import { readFileSync } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
import type { DigestBlock } from '../../../schemas/generated/types.js';
import { modernSession } from '../../fixtures/claude/sessions.js';
import { parse, render, scratch, verify } from './support.js';

// The card's uuid is random; here the first draw is a uuid the source already holds.
const draws: string[] = [];
vi.mock('node:crypto', async (original) => {
  const real = await original<typeof import('node:crypto')>();
  return { ...real, randomUUID: () => draws.shift() ?? real.randomUUID() };
});

const tmp = scratch('claude-card-uuid-');
const digest: DigestBlock = { goal: 'Fix the parser', covers_items: 3, files_touched: [], concepts: [], decisions: [], errors: [], open_tasks: [] };

describe('the state card a render appends', () => {
  it('never reuses a uuid any record of the source holds, including records off the live branch', async () => {
    const path = tmp.file('source.jsonl', modernSession().toJsonl());
    const t = await parse(path);
    const held = t.items.map((i) => i.uuid).filter((u): u is string => typeof u === 'string');
    const fresh = '5b0c9a1e-3d2f-4e6a-8b7c-9d0e1f2a3b4c';
    draws.push(held[0]!, held.at(-1)!, fresh);
    const { path: out } = await render(tmp.dir, path, t.source_sha256, [{ op: 'inject_digest', digest }]);
    const lines = readFileSync(out, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l) as { uuid?: string });
    const card = lines.at(-2)!;
    expect(card.uuid).toBe(fresh);
    expect(new Set(lines.map((l) => l.uuid).filter(Boolean)).size).toBe(lines.filter((l) => l.uuid).length);
    expect((await verify(out)).findings).toEqual([]);
  });
});
