/**
 * smol-toml hands back null-prototype objects and TomlDate values. Validation wants plain data, as a
 * JSON round trip would give, except that nan and inf stay numbers: a round trip would turn them into
 * null and the user would be told about a null they never wrote.
 */
export function toPlainData(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(toPlainData);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value)) {
      Object.defineProperty(out, key, { value: toPlainData((value as Record<string, unknown>)[key]), enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
  if (typeof value === 'bigint') return Number(value);
  return value;
}
