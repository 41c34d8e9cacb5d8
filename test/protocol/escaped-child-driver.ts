// Starts the misbehaving fixture bundle at argv[2] (mode escaped-child), proposes once, closes the
// channel and lets this process end on its own, as a gobstopper command does with a plugin.
import { admitBundle } from '../../kernel/plugins/admission/admit.js';
import { startBundle } from '../../kernel/plugins/host/running-bundle.js';
import { proposeParams, syntheticItems } from '../fixtures/bundles/propose-params.js';
import { StrategyPropose } from '../../sdk/protocol.js';

const running = await startBundle(admitBundle(process.argv[2]!), { hostVersion: '0.1.0' });
const answer = (await running.channel.request(StrategyPropose, proposeParams('fixture_strategy', syntheticItems(3)))) as { rationale: string };
await running.channel.close();
process.stdout.write(`${answer.rationale}\n`);
