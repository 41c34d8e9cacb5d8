/**
 * Starts many private-file creations at once and stops itself with SIGTERM while they are in the
 * thread pool. argv: <dir> <count> [unremovable]; with `unremovable`, a path the exit hook cannot
 * remove is registered first.
 */
import { join } from 'node:path';
import { removeOnExit } from '../../../kernel/exit-cleanup.js';
import { createExclusive } from '../../../kernel/vault/private-fs.js';

const [dir, count, unremovable] = process.argv.slice(2);
if (unremovable) removeOnExit('/proc/self/status');
for (let i = 0; i < Number(count); i += 1) {
  const path = join(dir!, `.tmp-${i}`);
  removeOnExit(path);
  void createExclusive(path).then((handle) => handle.close(), () => undefined);
}
process.kill(process.pid, 'SIGTERM');
setInterval(() => undefined, 1000);
