import { afterEach, describe, expect, it } from 'vitest';
import { forgetCompletedForStop, noteCompletedForStop, noteForStop, stopNote } from '../../kernel/exit-cleanup.js';

afterEach(() => {
  noteForStop(null);
  forgetCompletedForStop();
});

describe('the note a stop adds', () => {
  it('names the work completed earlier, oldest first, then the step under way', () => {
    expect(stopNote()).toBeNull();
    noteCompletedForStop('/a was published; resume it with: a');
    noteForStop(() => '/b was already published');
    noteCompletedForStop('/c was published; resume it with: c');
    expect(stopNote()).toBe('/a was published; resume it with: a; /c was published; resume it with: c; /b was already published');
    // A step under way that has nothing to tell yet leaves the completed work.
    noteForStop(() => null);
    expect(stopNote()).toBe('/a was published; resume it with: a; /c was published; resume it with: c');
    forgetCompletedForStop();
    expect(stopNote()).toBeNull();
  });
});
