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
    const modules: Record<string, Record<string, unknown>> = { 'gobstopper/dist/sdk/index.js': sdk, 'gobstopper/dist/sdk/strategy/index.js': strategy };
    // Every import of the package, so one from a path the SDK does not have is not passed over.
    const imports = [...readme.matchAll(/import \{ ([^}]+) \} from '(gobstopper[^']*)'/g)];
    expect(imports.length).toBeGreaterThan(0);
    for (const [, names, module] of imports) {
      const from = modules[module!];
      expect(from, `${module} is not a module of the SDK`).toBeDefined();
      for (const name of names!.split(',').map((n) => n.trim())) expect(from![name], `${name} from ${module}`).toBeDefined();
    }
  });
});
