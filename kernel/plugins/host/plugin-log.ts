/**
 * Where a plugin's `host/log` lines go when the call they arrive during takes none of its own: the
 * user's stderr, one line each, named by the plugin. Warnings and errors are shown (a provider that
 * skips an unreadable session file says so there); info and debug only with GOBSTOPPER_DEBUG set.
 * Plugin text is untrusted, so control characters are escaped, and a plugin that floods is cut off
 * after a bounded number of lines.
 */
import { printableText, shorten } from '../../text/human.js';
import type { PluginLogSink } from '../protocol/host-callbacks.js';

/** Lines one plugin id may write in one run before the rest are dropped. */
export const PLUGIN_LOG_LINES = 50;
const MESSAGE_CHARS = 400;

export function stderrPluginLog(env: NodeJS.ProcessEnv, write: (line: string) => void = (line) => void process.stderr.write(line)): PluginLogSink {
  const verbose = Boolean(env.GOBSTOPPER_DEBUG);
  const written = new Map<string, number>();
  return (pluginId, { level, message }) => {
    if (!verbose && (level === 'debug' || level === 'info')) return;
    const count = (written.get(pluginId) ?? 0) + 1;
    written.set(pluginId, count);
    if (count > PLUGIN_LOG_LINES + 1) return;
    if (count === PLUGIN_LOG_LINES + 1) {
      write(`gobstopper: ${pluginId}: further log lines dropped (more than ${PLUGIN_LOG_LINES})\n`);
      return;
    }
    write(`gobstopper: ${pluginId} ${level}: ${shorten(printableText(message), MESSAGE_CHARS)}\n`);
  };
}
