/** A binary min-heap with a caller-supplied order; selection by rank stays O(n log n). */
export class MinHeap<T> {
  private readonly data: T[] = [];

  constructor(private readonly before: (a: T, b: T) => boolean) {}

  get size(): number {
    return this.data.length;
  }

  push(value: T): void {
    const data = this.data;
    data.push(value);
    let i = data.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.before(data[i]!, data[parent]!)) break;
      [data[i], data[parent]] = [data[parent]!, data[i]!];
      i = parent;
    }
  }

  pop(): T | undefined {
    const data = this.data;
    if (data.length === 0) return undefined;
    const top = data[0]!;
    const last = data.pop()!;
    if (data.length > 0) {
      data[0] = last;
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        const right = left + 1;
        let smallest = i;
        if (left < data.length && this.before(data[left]!, data[smallest]!)) smallest = left;
        if (right < data.length && this.before(data[right]!, data[smallest]!)) smallest = right;
        if (smallest === i) break;
        [data[i], data[smallest]] = [data[smallest]!, data[i]!];
        i = smallest;
      }
    }
    return top;
  }
}
