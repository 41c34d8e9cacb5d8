/**
 * An admitted bundle that exists only in memory, for channel tests that wire a plugin through
 * in-memory streams: nothing on disk is read, only the manifest fields a test cares about differ.
 */
import type { AdmittedBundle } from '../../kernel/plugins/admission/admit.js';
import type { PluginManifest } from '../../schemas/generated/types.js';

export function inMemoryBundle(manifest: Partial<PluginManifest> = {}): AdmittedBundle {
  return {
    root: '/nonexistent/bundle',
    manifestPath: '/nonexistent/bundle/gobstopper-plugin.json',
    manifestSha256: '0'.repeat(64),
    files: [],
    totalBytes: 0,
    manifest: {
      protocol_version: 1,
      id: 'mem',
      version: '1.0.0',
      provides: {},
      runtime: 'node',
      executable: 'main.cjs',
      files: { 'main.cjs': '0'.repeat(64) },
      engines: { gobstopper: '*' },
      limits: { timeout_ms: 5000 },
      ...manifest,
    },
  };
}
