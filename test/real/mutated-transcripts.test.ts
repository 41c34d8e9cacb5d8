/**
 * The real transcripts, damaged the ways files get damaged (a line lost, repeated or swapped, a
 * member of the wrong type, a parent pointing elsewhere, a torn last line with or without its
 * newline), read by both providers. Whatever the damage: parse and verify answer or refuse with a
 * protocol input error, never another failure; and a plan the host admits renders into a copy that
 * verifies with no error the damaged source did not already have. Seeded, so a failure repeats.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { admitProposal } from '../../kernel/policy/admit-proposal.js';
import { defaultPolicy } from '../../kernel/policy/defaults.js';
import { toResolvedPolicy } from '../../kernel/policy/effective-policy.js';
import { isGobstopperError } from '../../kernel/errors.js';
import { PluginError } from '../../sdk/serve.js';
import type { Edit, Transcript } from '../../schemas/generated/types.js';
import { errorCodes, mainFixtures, noHost as ctx, PROVIDERS, REAL } from './provider-fixtures.js';

const VARIANTS_PER_FIXTURE = 8;
const PLANS_PER_VARIANT = 3;
const NOW = '2026-03-01T10:00:00.000Z';

/** FNV-1a of the fixture's name: its damage does not depend on the order a folder lists files in. */
function seedOf(name: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i += 1) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

/** A small seeded generator (an LCG): the same fixture and seed give the same damage. */
function generator(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return state / 0x100000000;
  };
  return { next, pick: <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]! };
}

const ODD_VALUES: unknown[] = [null, 0, -1, '', 'x', [], {}, true, 'toolu_x', [{ type: 'text', text: 'hi' }], { type: 'tool_result' }];

/** Replaces one value somewhere inside `value` (or `value` itself) with an odd one. */
function damageValue(value: unknown, rnd: ReturnType<typeof generator>, depth = 0): unknown {
  if (value !== null && typeof value === 'object' && depth < 6 && rnd.next() < 0.75) {
    const keys = Array.isArray(value) ? value.map((_, i) => i) : Object.keys(value);
    if (keys.length > 0) {
      const key = rnd.pick(keys as Array<string | number>);
      (value as Record<string | number, unknown>)[key] = damageValue((value as Record<string | number, unknown>)[key], rnd, depth + 1);
      return value;
    }
  }
  return rnd.pick(ODD_VALUES);
}

/** One damage of the file's lines; the text after it, and whether it still ends with a newline. */
function damage(lines: string[], rnd: ReturnType<typeof generator>): { lines: string[]; terminated: boolean } {
  const out = [...lines];
  const i = Math.floor(rnd.next() * out.length);
  const parsed = (k: number): Record<string, unknown> | null => {
    try {
      const v = JSON.parse(out[k]!);
      return v !== null && typeof v === 'object' && !Array.isArray(v) ? v : null;
    } catch {
      return null;
    }
  };
  let terminated = true;
  switch (Math.floor(rnd.next() * 8)) {
    case 0:
      out.splice(i, 1);
      break;
    case 1:
      out.splice(i, 0, out[i]!);
      break;
    case 2:
      if (i + 1 < out.length) [out[i], out[i + 1]] = [out[i + 1]!, out[i]!];
      break;
    case 3:
    case 4: {
      const v = parsed(i);
      if (v) out[i] = JSON.stringify(damageValue(v, rnd));
      break;
    }
    case 5: {
      const v = parsed(i);
      const other = parsed(Math.floor(rnd.next() * out.length));
      if (v && other) {
        v.parentUuid = other.uuid;
        out[i] = JSON.stringify(v);
      }
      break;
    }
    case 6: {
      // A torn last line, its newline kept or lost.
      const last = out[out.length - 1]!;
      out[out.length - 1] = last.slice(0, Math.max(1, Math.floor(last.length * rnd.next())));
      terminated = rnd.next() < 0.5;
      break;
    }
    case 7:
      out[i] = out[i]!.slice(0, Math.floor(out[i]!.length / 2));
      break;
  }
  return { lines: out, terminated };
}

/** Expects `error` to be the protocol's refusal of an input, not a failure of the provider itself. */
function expectRefusal(error: unknown, what: string): void {
  expect(error, `${what} failed with ${(error as Error)?.stack ?? String(error)}`).toBeInstanceOf(PluginError);
}

const fixtures = mainFixtures();
const work = mkdtempSync(join(tmpdir(), 'gob-real-mutated-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
let n = 0;
const tally = { variants: 0, parsed: 0, refused: 0, rendered: 0 };

describe.skipIf(fixtures.length === 0)('damaged real transcripts', () => {
  if (fixtures.length === 0) console.warn(`skipping: no real fixtures at ${REAL}`);

  for (const { dir, file } of fixtures) {
    it(`${dir}/${file}: every damaged copy is read or refused cleanly, and admitted plans render into copies that verify`, async () => {
      const provider = PROVIDERS[dir]!;
      const source = readFileSync(join(REAL, dir, file), 'utf8').split('\n');
      if (source[source.length - 1] === '') source.pop();
      const rnd = generator(seedOf(`${dir}/${file}`));
      for (let v = 0; v < VARIANTS_PER_FIXTURE; v += 1) {
        let lines = source;
        let terminated = true;
        for (let d = 1 + Math.floor(rnd.next() * 3); d > 0; d -= 1) ({ lines, terminated } = damage(lines, rnd));
        const text = lines.join('\n') + (terminated ? '\n' : '');
        const path = join(work, `${n++}-${file}`);
        writeFileSync(path, text);
        tally.variants += 1;

        let sourceErrors: Set<string>;
        try {
          sourceErrors = errorCodes((await provider.def.verify!({ provider_id: provider.id, path }, ctx)).findings);
        } catch (error) {
          expectRefusal(error, `verify of variant ${v}`);
          continue;
        }
        let transcript: Transcript;
        try {
          transcript = (await provider.def.parse!({ provider_id: provider.id, path }, ctx)) as Transcript;
        } catch (error) {
          expectRefusal(error, `parse of variant ${v}`);
          tally.refused += 1;
          continue;
        }
        tally.parsed += 1;
        const elidable = transcript.items.filter((item) => item.est_tokens > 0 && (item.elidable_bytes ?? 0) > 0).map((item) => item.line_index);
        if (elidable.length === 0) continue;
        const sha = createHash('sha256').update(text).digest('hex');
        for (let p = 0; p < PLANS_PER_VARIANT; p += 1) {
          const lineIndexes = [...new Set(Array.from({ length: 1 + Math.floor(rnd.next() * elidable.length) }, () => rnd.pick(elidable)))];
          const edits: Edit[] = [{ op: 'elide', line_indexes: lineIndexes, stub_template: '[output elided by gobstopper: {bytes} bytes]' }];
          if (rnd.next() < 0.6) edits.push({ op: 'inject_digest', digest: { goal: 'Keep the checks green', summary: 'Older tool output was elided.', covers_items: lineIndexes.length } });
          const policy = toResolvedPolicy({ ...defaultPolicy(), trigger_tokens: 1000, floor_tokens: 0, min_savings_tokens: 0, keep_recent_tool_outputs: rnd.pick([0, 1, 2]) });
          let admitted: ReturnType<typeof admitProposal>;
          try {
            admitted = admitProposal({ transcript, policy, context_tokens_before: Math.max(1, transcript.usage.context_tokens ?? 0), proposal: { edits, rationale: 'damaged copy', strategy: 'test', source: 'strategy' } });
          } catch (error) {
            expect(isGobstopperError(error), String(error)).toBe(true);
            continue;
          }
          if (admitted.status !== 'plan') continue;
          const staging = join(work, `${n++}.staging.jsonl`);
          writeFileSync(staging, '', { mode: 0o600 });
          try {
            await provider.def.render!({ provider_id: provider.id, path, source_sha256: sha, edits: admitted.plan.edits, staging_path: staging, new_session_id: null, now: NOW }, ctx);
          } catch (error) {
            // A render may still refuse what only reading the bytes shows (a torn last line before a card).
            expectRefusal(error, `render of variant ${v}`);
            continue;
          }
          tally.rendered += 1;
          const candidateErrors = errorCodes((await provider.def.verify!({ provider_id: provider.id, path: staging }, ctx)).findings);
          expect([...candidateErrors].filter((code) => !sourceErrors.has(code)), `variant ${v}, plan ${JSON.stringify(admitted.plan.edits).slice(0, 200)}`).toEqual([]);
        }
      }
    });
  }

  it('read most damaged copies and rendered plans of some', () => {
    console.log(`damaged copies: ${JSON.stringify(tally)}`);
    expect(tally.parsed).toBeGreaterThan(tally.variants / 4);
    expect(tally.rendered).toBeGreaterThan(0);
  });
});
