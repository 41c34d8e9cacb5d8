/** Entry point of the provider-codex bundle: serve the protocol on stdin/stdout. */
import { servePlugin } from '../../../sdk/index.js';
import { codexPlugin } from './plugin.js';

servePlugin(codexPlugin);
