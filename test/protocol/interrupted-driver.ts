// Starts the fixture bundle at argv[2], asks it to propose and, once its log (argv[3]) shows the
// call arrived, stops this process with SIGTERM mid-call, as a Ctrl-C or a kill stops a command.
import { readFileSync } from 'node:fs';
import { admitBundle } from '../../kernel/plugins/admission/admit.js';
import { startBundle } from '../../kernel/plugins/host/running-bundle.js';
import { proposeParams, syntheticItems } from '../fixtures/bundles/propose-params.js';
import { StrategyPropose } from '../../sdk/protocol.js';

const running = await startBundle(admitBundle(process.argv[2]!), { hostVersion: '0.1.0' });
void running.channel.request(StrategyPropose, proposeParams('fixture_strategy', syntheticItems(3))).catch(() => undefined);
const asked = setInterval(() => {
  if (!readFileSync(process.argv[3]!, 'utf8').includes('grandchild')) return;
  clearInterval(asked);
  process.kill(process.pid, 'SIGTERM');
}, 20);
