import { describe, expect, it, vi } from 'vitest';
import { checkStrategyParams, PARAMS_CHECK_DEADLINE_MS } from '../../../kernel/plugins/host/strategy-params.js';
import { STRATEGY_ID_FORMAT } from '../../../sdk/index.js';

describe("a strategy's params_schema", () => {
  it("one that refers to itself without end is named as the plugin's unusable schema, not a stack overflow", async () => {
    await expect(checkStrategyParams('loop_s', { $ref: '#' }, { keep: 1 })).rejects.toMatchObject({
      code: 'plugin_schema_violation',
      message: 'strategy loop_s declares a params_schema that is not a usable JSON Schema (it refers to itself without end)',
    });
  });

  it('one that breaks the JSON Schema rules is named by the place to fix and what may go there, on either thread', async () => {
    const typo = { type: 'object', properties: { count: { type: 'integr' } } };
    const said = 'strategy typo_s declares a params_schema that is not a usable JSON Schema (at /properties/count/type: must be one of "array", "boolean", "integer", "null", "number", "object", "string")';
    await expect(checkStrategyParams('typo_s', typo, { count: 1 })).rejects.toMatchObject({ code: 'plugin_schema_violation', message: said });
    // A pattern sends the check to a worker thread; the answer is worded the same.
    const patterned = { ...typo, properties: { ...typo.properties, name: { type: 'string', pattern: '^[a-z]+$' } } };
    await expect(checkStrategyParams('typo_s', patterned, { name: 'abc' })).rejects.toMatchObject({ code: 'plugin_schema_violation', message: said });
    await expect(checkStrategyParams('min_s', { type: 'object', minProperties: -1 }, {})).rejects.toThrow(/not a usable JSON Schema \(at \/minProperties: must be >= 0\)$/);
  });

  it('empty params pass a schema that declares none, and are checked against any other', async () => {
    await expect(checkStrategyParams('none_s', { type: 'object', additionalProperties: false, properties: {} }, {})).resolves.toBeUndefined();
    await expect(checkStrategyParams('none_s', { type: 'object', description: 'no params' }, {})).resolves.toBeUndefined();
    // Shapes the shortcut does not take go through the compiler, which says what is wrong.
    await expect(checkStrategyParams('min_s', { type: 'object', properties: {}, minProperties: 1 }, {})).rejects.toMatchObject({ code: 'invalid_strategy_params' });
    await expect(checkStrategyParams('arr_s', { type: 'array', properties: {} }, {})).rejects.toMatchObject({ code: 'invalid_strategy_params' });
    await expect(checkStrategyParams('bad_s', { type: 'object', properties: {}, description: 5 }, {})).rejects.toMatchObject({ code: 'plugin_schema_violation' });
    await expect(checkStrategyParams('none_s', { type: 'object', additionalProperties: false, properties: {} }, { keep: 1 })).rejects.toMatchObject({ code: 'invalid_strategy_params' });
  });

  it("two strategies' schemas declaring one $id are each checked as written, neither refused for the other", async () => {
    const id = 'https://example.com/params.json';
    const first = { $id: id, type: 'object', properties: { n: { type: 'integer' } }, additionalProperties: false };
    const second = { $id: id, type: 'object', properties: { m: { $ref: `${id}#/$defs/count` } }, $defs: { count: { type: 'integer' } }, additionalProperties: false };
    await expect(checkStrategyParams('first_s', first, { n: 1 })).resolves.toBeUndefined();
    await expect(checkStrategyParams('second_s', second, { m: 2 })).resolves.toBeUndefined();
    await expect(checkStrategyParams('second_s', second, { m: 'two' })).rejects.toMatchObject({ code: 'invalid_strategy_params', message: expect.stringContaining('at /m: must be integer') });
    await expect(checkStrategyParams('first_s', first, { m: 2 })).rejects.toMatchObject({ code: 'invalid_strategy_params', message: expect.stringContaining("additional properties 'm'") });
  });

  it('a usable one still refuses params that do not match it', async () => {
    await expect(checkStrategyParams('s', { type: 'object', additionalProperties: false }, { bogus: 1 })).rejects.toThrow(/do not match the params_schema it declares: must NOT have additional properties 'bogus'/);
    await expect(checkStrategyParams('s', { type: 'object' }, { bogus: 1 })).resolves.toBeUndefined();
  });

  it('a value the schema excludes with not is named, on either thread, not as "must NOT be valid"', async () => {
    const schema = { type: 'object', properties: { 'a/b': { type: 'object', properties: { editor: { type: 'string', not: { enum: ['agentic', 'auto'] } } } } } };
    // Without a pattern the CLI's thread checks; with one, the worker does.
    await expect(checkStrategyParams('agentic', schema, { 'a/b': { editor: 'auto' } })).rejects.toThrow('strategy_params for agentic do not match the params_schema it declares at /a~1b/editor: must not be "auto"');
    const patterned = { ...schema, properties: { 'a/b': { ...schema.properties['a/b'], properties: { editor: { ...schema.properties['a/b'].properties.editor, pattern: '^[a-z]+$' } } } } };
    await expect(checkStrategyParams('agentic', patterned, { 'a/b': { editor: 'agentic' } })).rejects.toThrow('at /a~1b/editor: must not be "agentic"');
    await expect(checkStrategyParams('agentic', patterned, { 'a/b': { editor: 'elide' } })).resolves.toBeUndefined();
  });

  it('patterns are checked as any other keyword, off the CLI thread', async () => {
    const schema = { type: 'object', properties: { name: { type: 'string', pattern: '^[a-z]+$' } }, patternProperties: { '^x_': { type: 'integer' } } };
    await expect(checkStrategyParams('p', schema, { name: 'abc', x_keep: 3 })).resolves.toBeUndefined();
    await expect(checkStrategyParams('p', schema, { name: 'ABC' })).rejects.toMatchObject({ code: 'invalid_strategy_params', message: expect.stringContaining('at /name: must match pattern "^[a-z]+$"') });
    await expect(checkStrategyParams('p', schema, { x_keep: 'three' })).rejects.toMatchObject({ code: 'invalid_strategy_params', message: expect.stringContaining('at /x_keep: must be integer') });
    await expect(checkStrategyParams('p', { pattern: '(' }, 'x')).rejects.toMatchObject({ code: 'plugin_schema_violation' });
  });

  it('a pattern that backtracks without end is refused at the deadline instead of holding the CLI', async () => {
    const schema = { type: 'object', properties: { name: { type: 'string', pattern: '^(a+)+$' } } };
    const started = Date.now();
    await expect(checkStrategyParams('slow_s', schema, { name: `${'a'.repeat(40)}!` })).rejects.toMatchObject({
      code: 'plugin_schema_violation',
      message: expect.stringContaining(`took over ${PARAMS_CHECK_DEADLINE_MS / 1000} s`),
    });
    expect(Date.now() - started).toBeLessThan(PARAMS_CHECK_DEADLINE_MS + 3000);
  }, 20_000);

  it('parameters with no text for a pattern to test are checked at once, the schema still enforced', async () => {
    const schema = { type: 'object', required: ['keep'], properties: { name: { type: 'string', pattern: '^(a+)+$' } }, patternProperties: { '^(b+)+$': { type: 'integer' } } };
    const started = Date.now();
    await expect(checkStrategyParams('quick_s', schema, {})).rejects.toMatchObject({ code: 'invalid_strategy_params', message: expect.stringContaining("must have required property 'keep'") });
    await expect(checkStrategyParams('quick_s', { ...schema, required: [] }, {})).resolves.toBeUndefined();
    expect(Date.now() - started).toBeLessThan(1000);
    // A member name is text: it still goes to the thread with a deadline.
    await expect(checkStrategyParams('quick_s', { ...schema, required: [] }, { [`${'b'.repeat(40)}!`]: 1 })).rejects.toMatchObject({ code: 'plugin_schema_violation' });
  }, 20_000);

  it("a format ajv does not know is ignored without a word on the CLI's stderr, on either thread", async () => {
    const written: string[] = [];
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => (written.push(String(chunk)), true));
    const warn = vi.spyOn(console, 'warn').mockImplementation((...args: unknown[]) => void written.push(args.join(' ')));
    try {
      const schema = { type: 'object', properties: { a: { type: 'string', format: 'made-up' }, b: { type: 'string', pattern: '^x', format: 'made-up-too' } } };
      await expect(checkStrategyParams('fmt_s', schema, {})).resolves.toBeUndefined();
      await expect(checkStrategyParams('fmt_s', schema, { a: 'one', b: 'xy' })).resolves.toBeUndefined();
      // The worker's stderr reaches this process's asynchronously.
      await new Promise((resolve) => setTimeout(resolve, 200));
    } finally {
      stderr.mockRestore();
      warn.mockRestore();
    }
    expect(written.join('')).not.toMatch(/unknown format/);
  });

  it('a string marked as a strategy id must name one some bundle serves, found by the schema on either thread', async () => {
    const served = ['elide', 'dedupe'];
    // The mark as the protocol documents it, and as the SDK hands it to plugin authors.
    expect(STRATEGY_ID_FORMAT).toBe('strategy-id');
    const plain = { type: 'object', properties: { editor: { type: 'string', format: 'strategy-id' }, note: { type: 'string' } } };
    await expect(checkStrategyParams('sel', plain, { editor: 'elide', note: 'elidee' }, served)).resolves.toBeUndefined();
    await expect(checkStrategyParams('sel', plain, { editor: 'elidee' }, served)).rejects.toMatchObject({
      code: 'unknown_strategy',
      exit: 1,
      message: "unknown strategy 'elidee' in strategy_params.editor of sel (did you mean elide?); known: elide, dedupe",
      details: { kind: 'strategy', id: 'elidee', strategy: 'sel', key: 'strategy_params.editor' },
    });
    // With a pattern the check runs on a worker, which is given the served ids too.
    const patterned = { type: 'object', properties: { candidates: { type: 'array', items: { type: 'string', pattern: '^[a-z_]+$', format: 'strategy-id' } } } };
    await expect(checkStrategyParams('sel', patterned, { candidates: ['dedupe', 'elide'] }, served)).resolves.toBeUndefined();
    await expect(checkStrategyParams('sel', patterned, { candidates: ['dedupe', 'elidee'] }, served)).rejects.toMatchObject({ code: 'unknown_strategy', details: { id: 'elidee', key: 'strategy_params.candidates[1]' } });
    // Without the served ids (a strategy's own run), the mark checks nothing.
    await expect(checkStrategyParams('sel', patterned, { candidates: ['elidee'] })).resolves.toBeUndefined();
    await expect(checkStrategyParams('sel', plain, { editor: 'elidee' })).resolves.toBeUndefined();
  });

  it('every unknown strategy id is named at once, on either thread, while a wrong shape is said alone', async () => {
    const served = ['elide', 'dedupe'];
    const items = { type: 'string', format: 'strategy-id' };
    const plain = { type: 'object', properties: { editor: items, candidates: { type: 'array', items } } };
    const patterned = { type: 'object', properties: { editor: { ...items, pattern: '^[a-z_]+$' }, candidates: { type: 'array', items: { ...items, pattern: '^[a-z_]+$' } } } };
    for (const schema of [plain, patterned]) {
      await expect(checkStrategyParams('sel', schema, { editor: 'scorred', candidates: ['elide', 'nope', 'dedupe', 'nada'] }, served)).rejects.toMatchObject({
        code: 'unknown_strategy',
        message: "unknown strategies 'scorred' in strategy_params.editor, 'nope' in strategy_params.candidates[1] and 'nada' in strategy_params.candidates[3] of sel; known: elide, dedupe",
        details: {
          kind: 'strategy',
          id: 'scorred',
          strategy: 'sel',
          key: 'strategy_params.editor',
          unknown: [
            { id: 'scorred', key: 'strategy_params.editor', place: 'value' },
            { id: 'nope', key: 'strategy_params.candidates[1]', place: 'value' },
            { id: 'nada', key: 'strategy_params.candidates[3]', place: 'value' },
          ],
        },
      });
      // Member names marked as ids (a weight per strategy): each unknown name is named, not the object.
      const weights = { type: 'object', properties: { weights: { type: 'object', propertyNames: schema === plain ? items : { ...items, pattern: '^[a-z_]+$' } } } };
      await expect(checkStrategyParams('sel', weights, { weights: { elide: 1, nope: 2, nada: 3 } }, served)).rejects.toMatchObject({
        message: "unknown strategies 'nope' in strategy_params.weights and 'nada' in strategy_params.weights of sel; known: elide, dedupe",
        details: { id: 'nope', key: 'strategy_params.weights', unknown: [{ id: 'nope', key: 'strategy_params.weights', place: 'member_name' }, { id: 'nada', key: 'strategy_params.weights', place: 'member_name' }] },
      });
      // A shape error met first is said alone, as before: the unknown ids after it wait for the next run.
      await expect(checkStrategyParams('sel', schema, { editor: 5, candidates: ['nope', 'nada'] }, served)).rejects.toMatchObject({
        code: 'invalid_strategy_params',
        message: 'strategy_params for sel do not match the params_schema it declares at /editor: must be string',
      });
    }
  });
});
