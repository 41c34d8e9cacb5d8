/**
 * Where a fork's render found the top-level sessionId values of each line it copied. The fork's
 * verify compares every copied line with its source line around those values (verify-rendered.ts);
 * the same function over the same bytes gives the same spans, so the verify takes them from here
 * instead of searching every source line again.
 */
import type { ByteSpan } from '../../../sdk/raw-json.js';

const UNKNOWN = -1;
const NONE = -2;
const SEVERAL = -3;

export class ForkSpans {
  private readonly starts: Int32Array;
  private readonly ends: Int32Array;
  private readonly several = new Map<number, readonly ByteSpan[]>();

  constructor(lines: number) {
    this.starts = new Int32Array(lines).fill(UNKNOWN);
    this.ends = new Int32Array(lines);
  }

  set(line: number, spans: readonly ByteSpan[]): void {
    if (line >= this.starts.length) return;
    if (spans.length === 0) this.starts[line] = NONE;
    else if (spans.length === 1) {
      this.starts[line] = spans[0]!.start;
      this.ends[line] = spans[0]!.end;
    } else {
      this.starts[line] = SEVERAL;
      this.several.set(line, spans);
    }
  }

  /** The spans recorded for `line`; undefined when the render recorded none for it. */
  get(line: number): readonly ByteSpan[] | undefined {
    const start = this.starts[line];
    if (start === undefined || start === UNKNOWN) return undefined;
    if (start === NONE) return [];
    if (start === SEVERAL) return this.several.get(line);
    return [{ start, end: this.ends[line]! }];
  }
}
