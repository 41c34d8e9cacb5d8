/**
 * The plugin subsystem's public surface for the rest of the kernel: find and admit bundles, run
 * them, and call them through typed clients. Nothing outside kernel/plugins speaks JSON-RPC.
 */
export { admitBundle, type AdmittedBundle, type AdmitOptions } from './admission/admit.js';
export { AdmissionCodes, AdmissionError, BundleLimits, MANIFEST_FILE, type AdmissionCode } from './admission/rules.js';
export { PluginHost, type PluginHostOptions, type ListedStrategy } from './host/plugin-host.js';
export { ProviderClient, StrategyClient, ScorerClient } from './host/clients.js';
export { PluginLimitDefaults, effectiveLimits, type EffectiveLimits } from './host/plugin-limits.js';
export { startBundle, connectBundle, type RunningBundle, type StartOptions } from './host/running-bundle.js';
export type { HostCallbacks } from './protocol/host-callbacks.js';
export { PluginFailure, type PluginFailureCode } from './protocol/plugin-failure.js';
export { PluginChannel, type ChannelTransport, type ChannelOptions, type PeerExit } from './protocol/plugin-channel.js';
export { PluginRegistry, type RegistryOptions, type Shadowing } from './registry/registry.js';
export { bundleLabel, type BundleRef, type BundleSource, type ProvidedKind } from './registry/bundle-ref.js';
export { installBundle, removeBundle, type InstallOutcome, type RemoveOutcome } from './registry/install.js';
export { gobstopperVersion, packageRoot } from './package-root.js';
