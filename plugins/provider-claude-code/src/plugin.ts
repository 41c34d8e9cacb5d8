/**
 * The provider-claude-code bundle: Claude Code sessions found, parsed, verified, rendered and
 * forked. Everything Claude-specific lives in this bundle.
 */
import type { PluginDefinition } from '../../../sdk/serve.js';
import { discoverSessions, identifyTranscript, tailUsage } from './discover.js';
import { forkTarget } from './fork.js';
import { parseTranscript } from './parse.js';
import { DISPLAY_NAME, NATIVE_CONTROL, PROVIDER_ID } from './provider-id.js';
import { renderCandidate } from './render.js';
import { expectScanOf } from './scan-pool.js';
import { verifyTranscript } from './verify.js';

export const PLUGIN_VERSION = '0.1.0';

export const claudeCodePlugin: PluginDefinition = {
  id: 'provider-claude-code',
  version: PLUGIN_VERSION,
  providers: {
    [PROVIDER_ID]: {
      info: { display_name: DISPLAY_NAME, native_control: NATIVE_CONTROL, supports_cache_edit: true },
      discover: (params) => discoverSessions(params),
      identify: (params) => {
        const identified = identifyTranscript(params);
        // The host identifies the file it was given by path, and usually reads it next.
        expectScanOf(identified.session?.bytes ?? 0);
        return identified;
      },
      usage: (params) => tailUsage(params),
      parse: (params) => parseTranscript(params),
      render: (params) => renderCandidate(params),
      verify: (params) => verifyTranscript(params),
      forkTarget: (params) => forkTarget(params),
    },
  },
};
