/**
 * A fixed number of slots that async work takes turns in, first come first served. The eval runs
 * its strategies side by side but keeps shared work in order: one proposal at a time, provider
 * calls queued two deep, one real client at a time, and a bounded number of rows in flight.
 */
export class Slots {
  private free: number;
  private readonly waiting: Array<() => void> = [];

  constructor(capacity: number) {
    this.free = Math.max(1, Math.floor(capacity));
  }

  /** Runs `work` once a slot is free, and frees the slot when it settles. */
  async run<T>(work: () => Promise<T> | T): Promise<T> {
    await this.acquire();
    try {
      return await work();
    } finally {
      this.release();
    }
  }

  private acquire(): Promise<void> {
    if (this.free > 0) {
      this.free -= 1;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private release(): void {
    const next = this.waiting.shift();
    // The slot passes straight to the next in line, so a later caller cannot overtake it.
    if (next) next();
    else this.free += 1;
  }
}
