/**
 * With GOBSTOPPER_DEBUG set, what a plugin writes to stderr is shown as it comes, a line at a time
 * under the plugin's id, so an author sees their diagnostics on runs that succeed too (otherwise the
 * ring buffer's tail is shown only with a failure). Controls are escaped as host/log lines are:
 * stderr may quote transcript text, which must not drive the terminal.
 */
import { printableText } from '../../text/human.js';

const MAX_LINE_CHARS = 2000;

export function stderrEcho(pluginId: string, write: (text: string) => void = (text) => process.stderr.write(text)): (chunk: Buffer) => void {
  let pending = '';
  return (chunk) => {
    pending += chunk.toString('utf8');
    let nl = pending.indexOf('\n');
    while (nl !== -1) {
      emit(pending.slice(0, nl));
      pending = pending.slice(nl + 1);
      nl = pending.indexOf('\n');
    }
    // A plugin that never ends its line still gets shown, in pieces.
    if (pending.length > MAX_LINE_CHARS) {
      emit(pending);
      pending = '';
    }
  };
  function emit(line: string): void {
    write(`[${pluginId}] ${printableText(line.slice(0, MAX_LINE_CHARS))}\n`);
  }
}
