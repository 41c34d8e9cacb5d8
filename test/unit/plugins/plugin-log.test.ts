import { describe, expect, it } from 'vitest';
import { PLUGIN_LOG_LINES, stderrPluginLog } from '../../../kernel/plugins/host/plugin-log.js';

describe('plugin log lines on stderr', () => {
  it('shows warnings and errors, and info and debug only with GOBSTOPPER_DEBUG', () => {
    const quiet: string[] = [];
    const sink = stderrPluginLog({}, (l) => quiet.push(l));
    for (const level of ['debug', 'info', 'warn', 'error'] as const) sink('provider-x', { level, message: `a ${level} line` });
    expect(quiet).toEqual(['gobstopper: provider-x warn: a warn line\n', 'gobstopper: provider-x error: a error line\n']);
    const verbose: string[] = [];
    const debug = stderrPluginLog({ GOBSTOPPER_DEBUG: '1' }, (l) => verbose.push(l));
    debug('provider-x', { level: 'debug', message: 'details' });
    expect(verbose).toEqual(['gobstopper: provider-x debug: details\n']);
  });

  it('keeps a plugin\'s text on one line and away from the terminal\'s controls', () => {
    const lines: string[] = [];
    stderrPluginLog({}, (l) => lines.push(l))('evil', { level: 'warn', message: 'one\ntwo \u001b[2J\u202e' + 'x'.repeat(1000) });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^gobstopper: evil warn: one\\u000atwo \\u001b\[2J\\u202ex+…\n$/);
    expect(lines[0]!.length).toBeLessThan(450);
  });

  it('cuts a flooding plugin off after a bounded number of lines, saying so once', () => {
    const lines: string[] = [];
    const sink = stderrPluginLog({}, (l) => lines.push(l));
    for (let i = 0; i < PLUGIN_LOG_LINES * 3; i++) sink('flood', { level: 'warn', message: `line ${i}` });
    sink('quiet', { level: 'error', message: 'still heard' });
    expect(lines).toHaveLength(PLUGIN_LOG_LINES + 2);
    expect(lines[PLUGIN_LOG_LINES]).toBe(`gobstopper: flood: further log lines dropped (more than ${PLUGIN_LOG_LINES})\n`);
    expect(lines.at(-1)).toBe('gobstopper: quiet error: still heard\n');
  });
});
