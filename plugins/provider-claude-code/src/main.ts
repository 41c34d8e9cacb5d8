import { servePlugin } from '../../../sdk/serve.js';
import { claudeCodePlugin } from './plugin.js';
import { enableParallelScan } from './scan-pool.js';
import { isScanWorker, serveScanWorker } from './scan-worker.js';

// One bundle, two roles: the plugin process serves the protocol; the threads it starts from this
// same file (the CommonJS bundle, which __filename names) read ranges of large transcripts. Run
// any other way (as an ES module from sources), it reads on one thread.
if (isScanWorker()) serveScanWorker();
else {
  if (typeof __filename === 'string') enableParallelScan(__filename);
  servePlugin(claudeCodePlugin);
}
