import { describe, expect, it } from 'vitest';
import { stderrEcho } from '../../../kernel/plugins/process/stderr-echo.js';

describe('plugin stderr shown under GOBSTOPPER_DEBUG', () => {
  it('shows whole lines under the plugin id, joined across chunks, with control characters escaped', () => {
    const out: string[] = [];
    const echo = stderrEcho('my-strategy', (text) => out.push(text));
    echo(Buffer.from('items: 14'));
    expect(out).toEqual([]);
    echo(Buffer.from('2\nsecond \u001b[31mred\u001b[0m line\npartial'));
    expect(out).toEqual(['[my-strategy] items: 142\n', '[my-strategy] second \\u001b[31mred\\u001b[0m line\n']);
  });

  it('shows a line that never ends in bounded pieces', () => {
    const out: string[] = [];
    const echo = stderrEcho('chatty', (text) => out.push(text));
    echo(Buffer.from('x'.repeat(5000)));
    expect(out).toHaveLength(1);
    expect(out[0]!.length).toBeLessThan(2100);
  });
});
