/**
 * With GOBSTOPPER_DEBUG set, what a plugin writes to stderr is shown as it comes, a line at a time
 * under the plugin's id, so an author sees their diagnostics on runs that succeed too (otherwise the
 * ring buffer's tail is shown only with a failure). Control characters are replaced: stderr may
 * quote transcript text, which must not drive the terminal.
 */
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
    const clean = line.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, '?').slice(0, MAX_LINE_CHARS);
    write(`[${pluginId}] ${clean}\n`);
  }
}
