import { describe, expect, it } from 'vitest';
import { checkStrategyParams } from '../../../kernel/plugins/host/strategy-params.js';

describe("a strategy's params_schema", () => {
  it('one that refers to itself without end is named as the plugin\'s unusable schema, not a stack overflow', () => {
    let thrown: unknown;
    try {
      checkStrategyParams('loop_s', { $ref: '#' }, { keep: 1 });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({ code: 'plugin_schema_violation', message: 'strategy loop_s declares a params_schema that is not a usable JSON Schema (it refers to itself without end)' });
  });

  it('a usable one still refuses params that do not match it', () => {
    expect(() => checkStrategyParams('s', { type: 'object', additionalProperties: false }, { bogus: 1 })).toThrow(/do not match the params_schema it declares: must NOT have additional properties 'bogus'/);
    expect(() => checkStrategyParams('s', { type: 'object' }, { bogus: 1 })).not.toThrow();
  });
});
