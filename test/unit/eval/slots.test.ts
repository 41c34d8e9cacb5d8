import { describe, expect, it } from 'vitest';
import { Slots } from '../../../kernel/eval/slots.js';

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('Slots', () => {
  it('runs at most `capacity` at once, in the order asked, and frees a slot when work throws', async () => {
    const slots = new Slots(2);
    const started: number[] = [];
    let running = 0;
    let most = 0;
    const job = (i: number) =>
      slots.run(async () => {
        started.push(i);
        running += 1;
        most = Math.max(most, running);
        await tick(i === 0 ? 20 : 2);
        running -= 1;
        if (i === 1) throw new Error('job 1 failed');
        return i;
      });
    const results = await Promise.allSettled([0, 1, 2, 3, 4].map(job));
    expect(most).toBe(2);
    expect(started).toEqual([0, 1, 2, 3, 4]);
    expect(results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message))).toEqual([0, 'job 1 failed', 2, 3, 4]);
  });

  it('a slot freed while others wait goes to the first in line, not to a newcomer', async () => {
    const slots = new Slots(1);
    const order: string[] = [];
    const first = slots.run(() => tick(5).then(() => order.push('first')));
    const queued = slots.run(() => order.push('queued'));
    await first;
    // Asked after the slot was handed on: it must wait behind the one already queued.
    const late = slots.run(() => order.push('late'));
    await Promise.all([queued, late]);
    expect(order).toEqual(['first', 'queued', 'late']);
  });
});
