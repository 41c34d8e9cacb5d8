import type * as T from '../../../schemas/generated/types.js';
import type { AdmittedBundle } from '../admission/admit.js';
import { bundleLabel, providedIds, type BundleRef, type ProvidedKind } from '../registry/bundle-ref.js';
import { PluginRegistry, type RegistryOptions } from '../registry/registry.js';
import type { ItemsOnTheWay } from '../../../sdk/transport/ndjson.js';
import type { HostCallbacks } from '../protocol/host-callbacks.js';
import { PluginFailure } from '../protocol/plugin-failure.js';
import { ProviderClient, ScorerClient, StrategyClient } from './clients.js';
import type { PluginLogSink } from '../protocol/host-callbacks.js';
import { startBundle, type RunningBundle, type StartOptions } from './running-bundle.js';

export interface PluginHostOptions extends RegistryOptions {
  /** Use this registry instead of building one from the options. */
  registry?: PluginRegistry;
  /** Environment that declared variables are copied from; defaults to this process's. */
  hostEnv?: NodeJS.ProcessEnv;
  /** Grace between a call's deadline (cancel) and the kill; default 1000 ms. */
  cancelGraceMs?: number;
  /** Where plugins' own log lines go (plugin-log.ts); dropped when absent. */
  log?: PluginLogSink;
  /** Starts a bundle; tests substitute in-memory plugins. Defaults to spawning the bundle. */
  start?: (bundle: AdmittedBundle, options: StartOptions) => Promise<RunningBundle>;
}

export interface ListedStrategy {
  bundle: { id: string; version: string; source: BundleRef['source'] };
  strategy: T.StrategyInfo;
}

/** A bundle's warm process, by the manifest it was admitted with. */
interface WarmProcess {
  sha: string;
  started: Promise<RunningBundle>;
  /** Set once the handshake is done, for what must not wait on a process still starting. */
  ready?: RunningBundle;
}

/**
 * The kernel's door to plugins. Finds the bundle serving an id, re-admits it (every file hashed,
 * the pin compared) on every use, keeps one warm process per bundle for as long as the host lives
 * (one command, or one bench worker across its sessions), and hands out typed clients. `close()` shuts
 * every process down and kills whatever is left of its process group.
 */
export class PluginHost {
  readonly registry: PluginRegistry;
  private readonly running = new Map<string, WarmProcess>();
  /** Breaches of the protocol met between calls, not yet reported (requireNoIdleBreach). */
  private readonly idleBreaches: PluginFailure[] = [];
  /**
   * Bundles whose start failed (spawn, handshake), by key, with the manifest it was. Not retried in
   * the same host: a second start would cost its deadline again for the same answer.
   */
  private readonly failedStarts = new Map<string, { sha: string; error: unknown }>();
  private closed = false;

  constructor(private readonly options: PluginHostOptions = {}) {
    this.registry = options.registry ?? new PluginRegistry(options);
  }

  async provider(providerId: string, callbacks: HostCallbacks = {}): Promise<ProviderClient> {
    const running = await this.startFor('provider', providerId);
    return new ProviderClient(running, served(running, 'provider', providerId, running.handshake.providers), callbacks);
  }

  async strategy(strategyId: string, callbacks: HostCallbacks = {}): Promise<StrategyClient> {
    const running = await this.startFor('strategy', strategyId);
    return new StrategyClient(running, served(running, 'strategy', strategyId, running.handshake.strategies), callbacks);
  }

  async scorer(scorerId: string, callbacks: HostCallbacks = {}): Promise<ScorerClient> {
    const running = await this.startFor('scorer', scorerId);
    return new ScorerClient(running, served(running, 'scorer', scorerId, running.handshake.scorers), callbacks);
  }

  /** Starts (or reuses) the warm process of a bundle; the bundle is admitted again first. */
  async start(ref: BundleRef): Promise<RunningBundle> {
    if (this.closed) throw new Error('the plugin host is closed');
    const bundle = this.registry.admit(ref);
    const key = `${ref.source}:${bundle.root}`;
    const existing = this.running.get(key);
    if (existing && existing.sha === bundle.manifestSha256) {
      const running = await existing.started.catch(() => undefined);
      if (running?.channel.alive) return running;
    }
    if (existing) {
      this.running.delete(key);
      void existing.started.then((r) => r.channel.close()).catch(() => undefined);
    }
    const failed = this.failedStarts.get(key);
    if (failed?.sha === bundle.manifestSha256) throw failed.error;
    const started = (this.options.start ?? startBundle)(bundle, {
      hostEnv: this.options.hostEnv,
      hostVersion: this.registry.version,
      cancelGraceMs: this.options.cancelGraceMs,
      log: this.options.log,
    });
    const entry: WarmProcess = { sha: bundle.manifestSha256, started };
    this.running.set(key, entry);
    try {
      const running = await started;
      // A process that dies is forgotten, so the next use admits and starts the bundle afresh.
      running.channel.onFailed(() => {
        if (this.running.get(key) === entry) this.running.delete(key);
        const breach = running.channel.breachWhileIdle;
        if (breach) this.idleBreaches.push(breach);
      });
      entry.ready = running;
      if (running.handshake.providers?.length) running.channel.onItemsOnTheWay((offer) => this.passItemsOn(offer, running));
      return running;
    } catch (error) {
      if (this.running.get(key) === entry) {
        this.running.delete(key);
        this.failedStarts.set(key, { sha: bundle.manifestSha256, error });
      }
      throw error;
    }
  }

  /** Starts a bundle by its own id (or a ref) and returns its handshake. */
  async inspect(ref: BundleRef): Promise<RunningBundle> {
    return this.start(ref);
  }

  /**
   * Every strategy id the winning bundles' manifests provide, sorted, without starting any of them:
   * a bundle that cannot start then fails on its own strategies' calls, not on the listing.
   */
  strategyIds(): string[] {
    return [...this.strategyWinners().keys()].sort((a, b) => a.localeCompare(b));
  }

  /** Every strategy the resolvable bundles report in their handshakes (shadowed ones left out). */
  async listStrategies(): Promise<ListedStrategy[]> {
    const result: ListedStrategy[] = [];
    for (const [id, ref] of [...this.strategyWinners()].sort(([a], [b]) => a.localeCompare(b))) {
      const running = await this.start(ref);
      const info = running.handshake.strategies?.find((s) => s.id === id);
      if (info) result.push({ bundle: { id: ref.id, version: ref.version, source: ref.source }, strategy: info });
    }
    return result;
  }

  /**
   * Starts the built-in bundles that serve strategies and sends those serving file strategies
   * `items` ahead of the calls that will name them (a selector is about to ask for those
   * strategies' plans over these items), so the bundles read them while the selector reads its
   * own. Only built-ins, and only where they still win their ids: an installed bundle runs when a
   * strategy it serves is asked for, never because a selector might, so a bundle nobody chose is
   * never started (nor sent a transcript), and one that hangs costs only the plans that need it.
   * Best effort: a bundle that fails to start fails again, with its error, when it is called.
   */
  async offerItemsToFileStrategies(items: readonly unknown[]): Promise<void> {
    const builtin = new Set(this.registry.builtins().refs.map((ref) => ref.root));
    const refs = new Map<string, BundleRef>();
    for (const ref of this.strategyWinners().values()) if (builtin.has(ref.root)) refs.set(ref.root, ref);
    await Promise.all(
      [...refs.values()].map(async (ref) => {
        const running = await this.start(ref).catch(() => undefined);
        if (running?.handshake.strategies?.some((s) => s.kind === 'file')) running.channel.offerItems(items);
      }),
    );
  }

  /**
   * A provider's transcript items, as they arrive: passed on to every strategy and scorer process
   * already running (the strategy a plan named was started while the provider parsed), so those
   * parse the items while this process parses and validates them.
   */
  private passItemsOn(offer: ItemsOnTheWay, from: RunningBundle): Promise<unknown> | undefined {
    const writes: Promise<unknown>[] = [];
    for (const { ready: running } of this.running.values()) {
      if (!running || running === from || !running.channel.alive) continue;
      if (!running.handshake.strategies?.length && !running.handshake.scorers?.length) continue;
      const written = running.channel.passItemsOn(offer);
      if (written) writes.push(written);
    }
    // The provider's line is parsed once these writes are done, so the strategies get it first.
    return writes.length > 0 ? Promise.all(writes) : undefined;
  }

  /** Sends `items` to a scorer's process ahead of its calls, as offerItemsToFileStrategies does. */
  async offerItemsToScorer(scorerId: string, items: readonly unknown[]): Promise<void> {
    const running = await this.startFor('scorer', scorerId).catch(() => undefined);
    running?.channel.offerItems(items);
  }

  /**
   * Throws the first breach of the protocol a plugin committed after answering (an answer sent
   * twice), once: answers from a plugin that does that are not acted on. The event loop turns once
   * first, so that what the plugin sent with its answer has been read; after close() every plugin
   * has answered its shutdown, so whatever it wrote before that has been read too.
   */
  async requireNoIdleBreach(): Promise<void> {
    await new Promise((resolve) => setImmediate(resolve));
    const breach = this.idleBreaches.shift();
    if (breach) throw breach;
  }

  /** Shuts every warm process down (shutdown, exit, then the group is killed regardless). */
  async close(): Promise<void> {
    this.closed = true;
    const entries = [...this.running.values()];
    this.running.clear();
    await Promise.all(entries.map((e) => e.started.then((r) => r.channel.close()).catch(() => undefined)));
  }

  /** The bundle that wins each strategy id (installed over built-in). */
  private strategyWinners(): Map<string, BundleRef> {
    const winners = new Map<string, BundleRef>();
    const all = [...this.registry.installed(), ...this.registry.builtins().refs];
    for (const ref of all) {
      for (const id of ref.provides.strategies) if (!winners.has(id)) winners.set(id, this.registry.resolve('strategy', id));
    }
    return winners;
  }

  private async startFor(kind: ProvidedKind, providedId: string): Promise<RunningBundle> {
    const ref = this.registry.resolve(kind, providedId);
    if (!providedIds(ref.provides, kind).includes(providedId)) throw new Error(`registry returned ${bundleLabel(ref)} for ${kind} ${providedId}`);
    return this.start(ref);
  }
}

function served<I extends { id: string }>(running: RunningBundle, kind: ProvidedKind, id: string, infos: I[] | undefined): I {
  const info = infos?.find((i) => i.id === id);
  if (info) return info;
  throw new PluginFailure('plugin_not_served', {
    pluginId: running.bundle.manifest.id,
    pluginVersion: running.bundle.manifest.version,
    reason: `lists ${kind} ${id} in its manifest but did not offer it in its initialize answer`,
  });
}
