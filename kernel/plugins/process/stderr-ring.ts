/**
 * Keeps the last `capacity` bytes a plugin wrote to stderr. Older bytes are dropped, so a chatty
 * plugin costs bounded memory however long it runs.
 */
export class StderrRing {
  private readonly buffer: Buffer;
  private start = 0;
  private length = 0;
  /** Everything ever written, including what was dropped. */
  totalBytes = 0;

  constructor(readonly capacity: number) {
    this.buffer = Buffer.alloc(Math.max(0, capacity));
  }

  push(chunk: Buffer): void {
    this.totalBytes += chunk.length;
    const cap = this.capacity;
    if (cap === 0) return;
    if (chunk.length >= cap) {
      chunk.copy(this.buffer, 0, chunk.length - cap);
      this.start = 0;
      this.length = cap;
      return;
    }
    const end = (this.start + this.length) % cap;
    const first = Math.min(chunk.length, cap - end);
    chunk.copy(this.buffer, end, 0, first);
    if (first < chunk.length) chunk.copy(this.buffer, 0, first);
    const overflow = this.length + chunk.length - cap;
    if (overflow > 0) {
      this.start = (this.start + overflow) % cap;
      this.length = cap;
    } else this.length += chunk.length;
  }

  /** The retained bytes, oldest first. */
  contents(): Buffer {
    if (this.start + this.length <= this.capacity) return Buffer.from(this.buffer.subarray(this.start, this.start + this.length));
    return Buffer.concat([this.buffer.subarray(this.start), this.buffer.subarray(0, (this.start + this.length) % this.capacity)]);
  }

  /**
   * The last few informative lines as one line, control characters removed, at most maxChars.
   * Runtimes end a crash with lines that say nothing about it (Node's stack frames, its version
   * banner, the braces of an error's fields), so those are skipped, and the last line that names
   * an error leads even when more lines followed it.
   */
  tail(maxLines = 3, maxChars = 400): string {
    const text = this.contents().toString('utf8');
    const lines = text
      .split(/\r?\n/)
      .map((l) => l.replace(/[\u0000-\u001f\u007f]/g, ' ').trim())
      .filter((l) => l.length > 0 && !UNINFORMATIVE.test(l));
    const last = lines.slice(-maxLines);
    let headline: string | undefined;
    for (let i = lines.length - 1; i >= 0 && headline === undefined; i -= 1) if (NAMES_AN_ERROR.test(lines[i]!)) headline = lines[i];
    let chosen = headline === undefined || last.includes(headline) ? last : [headline, ...last.slice(-(maxLines - 1))];
    let joined = chosen.join(' | ');
    // Too long with the error line among them (a huge dump printed after it): the lines before it go
    // first, so that it leads and survives the cut.
    if (joined.length > maxChars && headline !== undefined && chosen[0] !== headline) {
      chosen = chosen.slice(chosen.lastIndexOf(headline));
      joined = chosen.join(' | ');
    }
    if (joined.length <= maxChars) return joined;
    // Cut from the end when an error line leads (it is the part worth reading), else keep the end.
    return headline !== undefined && chosen[0] === headline ? `${joined.slice(0, maxChars - 1)}…` : `…${joined.slice(joined.length - maxChars + 1)}`;
  }
}

/**
 * A JavaScript stack frame (`at f (file:1:2)`, `at file:1:2`, `at async Promise.all (index 0)`),
 * Node's version banner, a lone brace or caret line. A plugin's own sentence that starts with "at"
 * is not a frame.
 */
const UNINFORMATIVE = /^(?:at\s.*(?::\d+:\d+\)?|\((?:<anonymous>|native|index \d+)\))|Node\.js v\d[\w.-]*|[{}[\]]+,?|\^+)$/;
/** "TypeError: …", "Error [ERR_X]: …", "ValueError: …", "error: …", "panicked at …", "fatal: …". */
const NAMES_AN_ERROR = /\b\w*(?:error|exception)\b|\bpanicked\b|\bfatal:/i;
