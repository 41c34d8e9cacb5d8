import type { PluginManifest } from '../../../schemas/generated/types.js';

/**
 * Notifications (logs, progress) a plugin may send in a row with no answer between them, and their
 * bytes. Far more than any honest progress report needs; what they bound is the host's queue of
 * messages not yet handled.
 */
export const MAX_NOTIFICATIONS_WITHOUT_ANSWER = { count: 10_000, bytes: 16 * 1024 * 1024 } as const;

/** Host defaults and ceilings for what a manifest's `limits` may ask for. */
export const PluginLimitDefaults = {
  timeoutMs: 30_000,
  timeoutCeilingMs: 120_000,
  maxOutputBytes: 1024 * 1024,
  maxOutputCeilingBytes: 256 * 1024 * 1024,
  stderrBytes: 64 * 1024,
  stderrCeilingBytes: 1024 * 1024,
} as const;

export interface EffectiveLimits {
  timeoutMs: number;
  maxOutputBytes: number;
  stderrBytes: number;
}

export function effectiveLimits(manifest: PluginManifest): EffectiveLimits {
  const d = PluginLimitDefaults;
  return {
    timeoutMs: Math.min(manifest.limits?.timeout_ms ?? d.timeoutMs, d.timeoutCeilingMs),
    maxOutputBytes: Math.min(manifest.limits?.max_output_bytes ?? d.maxOutputBytes, d.maxOutputCeilingBytes),
    stderrBytes: Math.min(manifest.limits?.max_stderr_bytes ?? d.stderrBytes, d.stderrCeilingBytes),
  };
}
