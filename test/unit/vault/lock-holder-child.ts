/** Holds an operation lock until killed (used to test "already running"). argv: <XDG_DATA_HOME> <operation> */
import { vaultLayout } from '../../../kernel/vault/layout.js';
import { lockOperation } from '../../../kernel/publish/receipt.js';

const [dataHome, operation] = process.argv.slice(2);
await lockOperation(vaultLayout({ XDG_DATA_HOME: dataHome! }), operation!);
process.stdout.write('locked\n');
setInterval(() => undefined, 1000);
