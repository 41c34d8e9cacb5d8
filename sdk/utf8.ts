/** Cutting text to a UTF-8 byte budget without splitting a character. */

/**
 * The longest prefix of `text` whose UTF-8 encoding fits in `maxBytes`. Counted, not encoded: it runs
 * for every summary of a 100,000-record parse. A lone surrogate counts as the 3 bytes its
 * replacement character takes.
 */
export function clipUtf8(text: string, maxBytes: number): string {
  // Every UTF-16 unit is at most 3 UTF-8 bytes, so short strings need no counting.
  if (text.length * 3 <= maxBytes) return text;
  let bytes = 0;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    let width: number;
    let units = 1;
    if (c < 0x80) width = 1;
    else if (c < 0x800) width = 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      width = 4;
      units = 2;
    } else width = 3;
    if (bytes + width > maxBytes) return text.slice(0, i);
    bytes += width;
    i += units - 1;
  }
  return text;
}

/** The longest prefix of UTF-8 `bytes` of at most `maxBytes` that ends on a character boundary. */
export function clipUtf8Bytes(bytes: Buffer, maxBytes: number): Buffer {
  if (bytes.length <= maxBytes) return bytes;
  let end = maxBytes;
  // Step back over continuation bytes (10xxxxxx) to the start of the cut character.
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end -= 1;
  return bytes.subarray(0, end);
}
