/**
 * Serve a plugin from plain functions. A built-in or third-party TypeScript bundle calls
 * `servePlugin(definition)` from its entry file; the SDK speaks the protocol on stdin/stdout.
 * Handlers must treat their params as read-only: a large `items` array is kept between calls and
 * handed to every later call for the same transcript (the `items_ref` feature, items-cache.ts).
 */
import { Console } from 'node:console';
import { basename } from 'node:path';
import { ConnectionError, createMessageConnection, ErrorCodes, ResponseError, type CancellationToken, type MessageConnection, type RequestType } from 'vscode-jsonrpc/node';
import type * as T from '../schemas/generated/types.js';
import { ItemsAhead, ItemsCache } from './items-cache.js';
import * as P from './protocol.js';
import { NdjsonMessageReader, NdjsonMessageWriter } from './transport/ndjson.js';

type MaybePromise<V> = V | Promise<V>;

/** What a handler can ask of the host while it runs. */
export interface HostContext {
  readonly token: CancellationToken;
  /** Scores from the scorer the user configured (host/score). */
  score(candidates: number[]): Promise<T.HostScoreResult>;
  /** Another strategy's validated plan (host/propose): how selectors such as `auto` stay plugins. */
  propose(strategyId: string): Promise<T.HostProposeResult>;
  /** Bounded record content; only for bundles that declare read_content. */
  readItems(lineIndexes: number[], maxBytesPerItem?: number): Promise<T.HostReadItemsResult>;
  log(level: T.LogParams['level'], message: string): void;
  progress(done: number, total?: number | null, message?: string | null): void;
}

export interface ProviderDefinition {
  info: Omit<T.ProviderInfo, 'id'>;
  discover?(params: T.ProviderDiscoverParams, ctx: HostContext): MaybePromise<T.ProviderDiscoverResult>;
  identify?(params: T.ProviderIdentifyParams, ctx: HostContext): MaybePromise<T.ProviderIdentifyResult>;
  usage?(params: T.ProviderUsageParams, ctx: HostContext): MaybePromise<T.ProviderUsageResult>;
  parse?(params: T.ProviderParseParams, ctx: HostContext): MaybePromise<T.Transcript>;
  render?(params: T.ProviderRenderParams, ctx: HostContext): MaybePromise<T.ProviderRenderResult>;
  verify?(params: T.ProviderVerifyParams, ctx: HostContext): MaybePromise<T.ProviderVerifyResult>;
  forkTarget?(params: T.ProviderForkTargetParams, ctx: HostContext): MaybePromise<T.ProviderForkTargetResult>;
}

export interface StrategyDefinition {
  info: Omit<T.StrategyInfo, 'id'>;
  propose(params: T.StrategyProposeParams, ctx: HostContext): MaybePromise<T.StrategyProposeResult>;
}

export interface ScorerDefinition {
  info: Omit<T.ScorerInfo, 'id'>;
  score(params: T.ScorerScoreParams, ctx: HostContext): MaybePromise<T.ScorerScoreResult>;
}

export interface PluginDefinition {
  id: string;
  version: string;
  providers?: Record<string, ProviderDefinition>;
  strategies?: Record<string, StrategyDefinition>;
  scorers?: Record<string, ScorerDefinition>;
  /**
   * Called with a transcript's items when they arrive ahead of any call that names them (`$/items`,
   * items_ref), on the next turn of the event loop: work that depends only on the transcript can
   * start before the first call. The array is the one later calls get; treat it as read-only.
   */
  itemsArrived?: (items: readonly unknown[]) => void;
}

/** Throw from a handler to answer with a protocol error code instead of a generic failure. */
/** What a plugin may attach to an error answer: the errno name of a file-system failure. */
export interface PluginErrorData {
  errno: string;
}

export class PluginError extends ResponseError<PluginErrorData | undefined> {
  constructor(code: number, message: string, data?: PluginErrorData) {
    super(code, message, data);
    // ResponseError pins its own prototype, which would make `instanceof PluginError` false.
    Object.setPrototypeOf(this, new.target.prototype);
  }
}

export const invalidInput = (message: string) => new PluginError(P.PluginErrorCodes.InvalidInput, message);
export const sourceChanged = (message = 'source changed while it was read') => new PluginError(P.PluginErrorCodes.SourceChanged, message);
export const limitExceeded = (message: string) => new PluginError(P.PluginErrorCodes.LimitExceeded, message);

function notSupported(what: string): PluginError {
  return new PluginError(P.PluginErrorCodes.NotSupported, `${what} is not provided by this plugin`);
}

/**
 * A score that is NaN or infinite goes out as JSON null, which the host reads as "unknown" and
 * keeps the item: the scorer's author hears of it once per answer instead of never.
 */
function warnNonFinite(scorerId: string, result: T.ScorerScoreResult, ctx: HostContext): T.ScorerScoreResult {
  const bad = result.scores.filter((s) => typeof s.keep_probability === 'number' && !Number.isFinite(s.keep_probability));
  if (bad.length > 0) {
    ctx.log('warn', `scorer ${scorerId} gave ${bad.length} keep_probability value(s) that are not finite numbers (first at line ${bad[0]!.line_index}: ${bad[0]!.keep_probability}); they are sent as null, which keeps those items`);
  }
  return result;
}

/** LogParams.message's maxLength: the host drops a longer host/log line unseen, so it is cut here. */
export const MAX_LOG_MESSAGE_CHARS = 4096;

function hostContext(connection: MessageConnection, token: CancellationToken): HostContext {
  return {
    token,
    score: (candidates) => connection.sendRequest(P.HostScore, { candidates }),
    propose: (strategyId) => connection.sendRequest(P.HostPropose, { strategy_id: strategyId }),
    readItems: (lineIndexes, maxBytesPerItem) => {
      const params: T.HostReadItemsParams = { line_indexes: lineIndexes };
      if (maxBytesPerItem !== undefined) params.max_bytes_per_item = maxBytesPerItem;
      return connection.sendRequest(P.HostReadItems, params);
    },
    log: (level, message) => void connection.sendNotification(P.HostLog, { level, message: message.length <= MAX_LOG_MESSAGE_CHARS ? message : Array.from(message).slice(0, MAX_LOG_MESSAGE_CHARS).join('') }),
    progress: (done, total = null, message = null) => void connection.sendNotification(P.Progress, { done, total, message }),
  };
}

function initializeResult(def: PluginDefinition, params: T.InitializeParams): T.InitializeResult {
  if (!params.protocol_versions.includes(P.PROTOCOL_VERSION)) {
    throw new PluginError(P.PluginErrorCodes.NotSupported, `plugin speaks protocol ${P.PROTOCOL_VERSION}, host offered ${params.protocol_versions.join(', ')}`);
  }
  return {
    protocol_version: P.PROTOCOL_VERSION,
    plugin: { id: def.id, version: def.version },
    providers: Object.entries(def.providers ?? {}).map(([id, p]) => ({ id, ...p.info })),
    strategies: Object.entries(def.strategies ?? {}).map(([id, s]) => ({ id, ...s.info })),
    scorers: Object.entries(def.scorers ?? {}).map(([id, s]) => ({ id, ...s.info })),
    features: [P.ProtocolFeatures.itemsRef],
  };
}

type ProviderMethod = Exclude<keyof ProviderDefinition, 'info'>;

/**
 * A handler's own bug (anything thrown but a PluginError or another JSON-RPC error): its stack goes
 * to stderr, which the host keeps, and the error answer names the file and line it was thrown at,
 * since that answer is what the host shows. A connection the host closed while the handler still
 * sent (items pieces, progress) is no bug, and nobody is left to answer.
 */
export function handlerBug(error: unknown): unknown {
  if (error instanceof ResponseError || error instanceof ConnectionError) return error;
  // `throw 'text'` or a rejection with a plain value: vscode-jsonrpc would answer "failed
  // unexpectedly without providing any details", so the value itself is the message.
  if (!(error instanceof Error)) return new ResponseError(ErrorCodes.InternalError, `a handler threw a value that is not an Error: ${thrownValue(error)}`.slice(0, 900));
  process.stderr.write(`${error.stack ?? `${error.name}: ${error.message}`}\n`);
  const frame = /\n\s+at (?:.*? \()?(.+?):(\d+):\d+\)?(?:\n|$)/.exec(error.stack ?? '');
  const where = frame ? ` (at ${basename(frame[1]!)}:${frame[2]})` : '';
  return new ResponseError(ErrorCodes.InternalError, `${error.name}: ${error.message}`.slice(0, 900) + where);
}

function thrownValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** Counts requests still being answered, so the process never exits with a reply unsent. */
class InFlight {
  private count = 0;
  private waiters: Array<() => void> = [];

  track<R>(work: () => R): R {
    this.count += 1;
    let result: R;
    try {
      result = work();
    } catch (error) {
      this.done();
      throw error;
    }
    if (result instanceof Promise) return result.finally(() => this.done()) as R;
    this.done();
    return result;
  }

  private done(): void {
    this.count -= 1;
    if (this.count === 0) for (const w of this.waiters.splice(0)) w();
  }

  idle(): Promise<void> {
    return this.count === 0 ? Promise.resolve() : new Promise((resolve) => this.waiters.push(resolve));
  }
}

export interface AttachOptions {
  /** Called on the host's `exit` notification; servePlugin ends the process there. */
  onExit?: () => void;
  /** Where `items_id` arrays are kept; a fresh bounded cache by default. Tests pass one to clear it. */
  itemsCache?: ItemsCache;
}

/** Wire a definition onto a connection. Exposed for in-memory protocol tests. */
export function attachPlugin(connection: MessageConnection, def: PluginDefinition, options: AttachOptions = {}): { idle(): Promise<void> } {
  const inFlight = new InFlight();
  const itemsCache = options.itemsCache ?? new ItemsCache();
  // Every request passes through the cache first, in arrival order, so an items_id stored by one
  // request is there for the items_ref of the next, and handlers only ever see whole params.
  const ahead = new ItemsAhead(connection);
  const onRequest = <Params, Result>(type: RequestType<Params, Result, void>, handler: (params: Params, token: CancellationToken) => unknown) =>
    connection.onRequest(type, ((params: Params, token: CancellationToken) => {
      try {
        const answer = ahead.answer(handler(itemsCache.resolve(params), token));
        return answer instanceof Promise ? answer.catch((error: unknown) => Promise.reject(handlerBug(error))) : answer;
      } catch (error) {
        throw handlerBug(error);
      }
    }) as never);
  onRequest(P.Initialize, (params) => {
    ahead.enabled = params.features?.includes(P.ProtocolFeatures.itemsRef) ?? false;
    return initializeResult(def, params);
  });
  // By method name: a typed one-parameter handler would refuse the param-less shutdown and exit
  // the protocol specifies (and hosts send).
  connection.onRequest(P.Methods.shutdown, () => null);
  connection.onNotification(P.Methods.exit, () => options.onExit?.());
  // Items sent ahead of the calls that will name them; a malformed offer has no one to answer and
  // is dropped (a later items_ref to it gets ItemsNotCached, and the host resends).
  connection.onNotification(P.Methods.items, (params: unknown) => {
    try {
      itemsCache.resolve(params);
    } catch {
      return; // dropped, see above
    }
    const items = (params as { items?: unknown }).items;
    const arrived = def.itemsArrived;
    if (!arrived || !Array.isArray(items)) return;
    setImmediate(() => {
      try {
        arrived(items);
      } catch {
        // Items the host passed on before checking them may be anything; a call that names them
        // meets the same problem and answers it.
      }
    });
  });

  const provider = <K extends ProviderMethod>(method: K) =>
    (params: { provider_id: string }, token: CancellationToken) => {
      const p = def.providers?.[params.provider_id];
      const handler = p?.[method] as ((params: unknown, ctx: HostContext) => unknown) | undefined;
      if (!handler) throw notSupported(`provider ${params.provider_id} ${String(method)}`);
      return inFlight.track(() => handler.call(p, params, hostContext(connection, token)));
    };
  onRequest(P.ProviderDiscover, provider('discover'));
  onRequest(P.ProviderIdentify, provider('identify'));
  onRequest(P.ProviderUsage, provider('usage'));
  onRequest(P.ProviderParse, provider('parse'));
  onRequest(P.ProviderRender, provider('render'));
  onRequest(P.ProviderVerify, provider('verify'));
  onRequest(P.ProviderForkTarget, provider('forkTarget'));

  onRequest(P.StrategyPropose, (params, token) => {
    const s = def.strategies?.[params.strategy_id];
    if (!s) throw notSupported(`strategy ${params.strategy_id}`);
    return inFlight.track(() => s.propose(params, hostContext(connection, token)));
  });
  onRequest(P.ScorerScore, (params, token) => {
    const s = def.scorers?.[params.scorer_id];
    if (!s) throw notSupported(`scorer ${params.scorer_id}`);
    const ctx = hostContext(connection, token);
    return inFlight.track(async () => warnNonFinite(params.scorer_id, await s.score(params, ctx), ctx));
  });
  return inFlight;
}

/**
 * Serve on this process's stdin/stdout until the host says exit or closes stdin. Replies still
 * being computed when stdin closes are finished and flushed first (a piped one-shot call works).
 */
/**
 * stdout belongs to the protocol: a console.log left in a handler would be a line that is not
 * JSON-RPC, and the host kills a plugin for that. The console methods that print to stdout print to
 * stderr instead, where the host keeps what a plugin says to explain a failure.
 */
function keepConsoleOffStdout(): void {
  const toStderr = new Console({ stdout: process.stderr, stderr: process.stderr });
  for (const method of ['log', 'info', 'debug', 'dir', 'dirxml', 'table'] as const) console[method] = toStderr[method].bind(toStderr);
}

export function servePlugin(def: PluginDefinition): MessageConnection {
  keepConsoleOffStdout();
  const connection = createMessageConnection(new NdjsonMessageReader(process.stdin, { dropBrokenOffers: true, keepOfferText: false }), new NdjsonMessageWriter(process.stdout));
  let exiting = false;
  const exitWhenIdle = () => {
    if (exiting) return;
    exiting = true;
    void tracker.idle().then(() => process.stdout.write('', () => process.exit(0)));
  };
  const tracker = attachPlugin(connection, def, { onExit: exitWhenIdle });
  connection.onClose(exitWhenIdle);
  connection.listen();
  return connection;
}
