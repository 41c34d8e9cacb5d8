/**
 * smol-toml hands back null-prototype objects and TomlDate values. Validation wants plain data, as a
 * JSON round trip would give, except that nan and inf stay numbers: a round trip would turn them into
 * null and the user would be told about a null they never wrote.
 *
 * The file is parsed with integers as BigInt, so a float written where a whole number belongs
 * (`8.0`, `2.5e5`) can still be told from an integer once both are numbers: its JSON pointer is
 * listed in `floats`. An integer too large for a number without loss is listed in `unsafeIntegers`,
 * and a date or time (`1979-05-27`, `07:32:00`), which is handed on as its ISO text, in `dates`.
 */
export interface PlainDataMarks {
  floats: Set<string>;
  unsafeIntegers: Set<string>;
  /** Dates and times, which become their ISO text: a schema would take them for strings. */
  dates: Set<string>;
  /** The first value nested deeper than MAX_NESTING, which is not descended into. */
  tooDeep?: string;
}

/**
 * As deep as smol-toml lets an inline array or table go. Dotted keys and table headers
 * (`[policy.strategy_params.a.a.a…]`) are not held to that bound, and every step after the parse
 * (this copy, the schema check, a strategy's params check) recurses once per level.
 */
export const MAX_NESTING = 1000;

export function toPlainData(value: unknown, marks?: PlainDataMarks, pointer = '', depth = 0): unknown {
  if (depth > MAX_NESTING && value !== null && typeof value === 'object' && !(value instanceof Date)) {
    if (marks) marks.tooDeep ??= pointer;
    return null;
  }
  if (value instanceof Date) {
    marks?.dates.add(pointer);
    return value.toISOString();
  }
  if (Array.isArray(value)) return value.map((v, i) => toPlainData(v, marks, `${pointer}/${i}`, depth + 1));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value)) {
      const plain = toPlainData((value as Record<string, unknown>)[key], marks, `${pointer}/${escapePointer(key)}`, depth + 1);
      Object.defineProperty(out, key, { value: plain, enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
  if (typeof value === 'bigint') {
    const number = Number(value);
    if (!Number.isSafeInteger(number)) marks?.unsafeIntegers.add(pointer);
    return number;
  }
  if (typeof value === 'number') marks?.floats.add(pointer);
  return value;
}

/** As ajv writes instance paths (RFC 6901). */
function escapePointer(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}
