/**
 * sdk/README.md is where a plugin author looks for what the TypeScript SDK offers: every value it
 * names as exported must be importable from the module it names, as its own import lines say.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as sdk from '../../../sdk/index.js';
import * as strategy from '../../../sdk/strategy/index.js';

const readme = readFileSync(join(import.meta.dirname, '..', '..', '..', 'sdk', 'README.md'), 'utf8');

/** The backticked names in the "what" column of the export table (types are left out: they have no value to import). */
function tableValues(): string[] {
  const rows = readme.split('\n').filter((line) => line.startsWith('| `'));
  const names = rows.flatMap((row) => [...row.split('|')[2]!.matchAll(/`([A-Za-z_][A-Za-z0-9_]*)`/g)].map((m) => m[1]!));
  return names.filter((name) => !/(Definition|Context|Params|Item|^Edit)$/.test(name));
}

describe('sdk/README.md', () => {
  it('names only values the SDK index exports', () => {
    const names = tableValues();
    expect(names.length).toBeGreaterThan(10);
    const exported = { ...sdk, ...sdk.protocol } as Record<string, unknown>;
    expect(names.filter((name) => exported[name] === undefined)).toEqual([]);
  });

  it('imports in its example only what each module exports', () => {
    for (const [, names, module] of readme.matchAll(/import \{ ([^}]+) \} from 'gobstopper\/dist\/sdk\/(index|strategy\/index)\.js'/g)) {
      const from = (module === 'index' ? sdk : strategy) as Record<string, unknown>;
      for (const name of names!.split(',').map((n) => n.trim())) expect(from[name], `${name} from ${module}`).toBeDefined();
    }
  });
});
