import { servePlugin } from '../../../sdk/serve.js';
import { claudeCodePlugin } from './plugin.js';

servePlugin(claudeCodePlugin);
