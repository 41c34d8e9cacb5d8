import { servePlugin } from '../../../sdk/serve.js';
import { definition } from './definition.js';

servePlugin(definition);
