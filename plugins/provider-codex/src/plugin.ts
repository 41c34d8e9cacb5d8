/** The provider-codex bundle as a plugin definition: one provider, `codex`. */
import type { PluginDefinition } from '../../../sdk/index.js';
import { discover } from './discover.js';
import { forkTarget } from './fork.js';
import { identify, usage } from './identify.js';
import { parse } from './parse.js';
import { DISPLAY_NAME, NATIVE_CONTROL, PROVIDER_ID } from './provider-id.js';
import { render } from './render.js';
import { verify } from './verify.js';

export const PLUGIN_VERSION = '0.1.0';

export const codexPlugin: PluginDefinition = {
  id: 'provider-codex',
  version: PLUGIN_VERSION,
  providers: {
    [PROVIDER_ID]: {
      info: { display_name: DISPLAY_NAME, native_control: NATIVE_CONTROL, supports_cache_edit: false },
      discover: (params) => discover(params),
      identify: (params) => identify(params),
      usage: (params) => usage(params),
      parse: (params) => parse(params),
      verify: (params) => verify(params),
      render: (params) => render(params),
      forkTarget: (params) => forkTarget(params),
    },
  },
};
