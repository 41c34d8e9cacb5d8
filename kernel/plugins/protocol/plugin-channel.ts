import { AsyncLocalStorage } from 'node:async_hooks';
import {
  CancellationTokenSource,
  createMessageConnection,
  ErrorCodes,
  RequestType,
  RequestType0,
  ResponseError,
  type CancellationToken,
  type MessageConnection,
  type MessageReader,
  type MessageWriter,
} from 'vscode-jsonrpc/node';
import type { Capability, LogParams, ProtocolFeature } from '../../../schemas/generated/types.js';
import { Methods, PluginErrorCodes, ProtocolFeatures } from '../../../sdk/protocol.js';
import { FramingError, ItemsText, NdjsonMessageReader, type ItemsOnTheWay, type ParsedOffer } from '../../../sdk/transport/ndjson.js';
import { GobstopperError } from '../../errors.js';
import { watchAnswers } from './answered-requests.js';
import type { HostCallbacks, PluginLogSink } from './host-callbacks.js';
import { clipLogParams } from './log-line.js';
import { PluginFailure, type PluginFailureCode } from './plugin-failure.js';
import { checkAgainst, methodValidators, validatorFor } from './schema-check.js';
import { ReceivedItems, SentItems } from './sent-items.js';
import { ITEMS_CACHE_ENTRIES } from '../../../sdk/items-cache.js';
import { LruMap } from '../../../sdk/lru-map.js';
import { MAX_NOTIFICATIONS_WITHOUT_ANSWER } from '../host/plugin-limits.js';

/** How the peer ended, as far as the transport knows. */
export interface PeerExit {
  code: number | null;
  signal: string | null;
}

/**
 * What the channel needs from whatever runs the plugin: the two message streams and a way to
 * stop it for good. A subprocess supplies a process-group kill; in-memory tests a no-op.
 */
export interface ChannelTransport {
  reader: MessageReader;
  writer: MessageWriter;
  /** Stops the peer for good (kills the process group) and resolves once it is reaped. */
  terminate(): Promise<void>;
  /** Settles when the peer has ended; explains a closed stream. */
  exited?: Promise<PeerExit>;
  /** A short tail of the peer's stderr, for error messages. */
  stderrTail?(): string;
  /** All of the peer's stderr that is kept, for GOBSTOPPER_DEBUG. */
  stderrText?(): string;
}

export interface ChannelOptions {
  pluginId: string;
  /** Named with the id in failures, when known. */
  pluginVersion?: string;
  /** Deadline of one call (manifest limits.timeout_ms). */
  timeoutMs: number;
  /** After the deadline the call is cancelled; this long later the process group is killed. */
  cancelGraceMs?: number;
  /** What the manifest allows the plugin to ask for. */
  capabilities: readonly Capability[];
  /** The message size cap, only to word overflow errors. */
  maxOutputBytes?: number;
  /** host/log lines that arrive while no call in flight takes them itself (plugin-log.ts). */
  log?: PluginLogSink;
}

interface CallFrame {
  method: string;
  timeoutMs: number;
  callbacks: HostCallbacks;
  cts: CancellationTokenSource;
  remainingMs: number;
  startedAt: number;
  timer: NodeJS.Timeout | undefined;
  /** The wall-clock bound, which host callbacks do not pause (HARD_DEADLINE_FACTOR). */
  hardTimer: NodeJS.Timeout | undefined;
  /** Host callbacks running for this call; the deadline is paused while the host works. */
  callbacksRunning: number;
  cancelled: boolean;
  settled: boolean;
  fail(failure: PluginFailure): void;
}

interface CallContext {
  channel: PluginChannel;
  parent: CallContext | undefined;
}

/** Marks code running inside a host callback, so a call it makes to the same plugin nests instead of queueing behind its own caller. */
const callContext = new AsyncLocalStorage<CallContext>();

const HOST_REQUESTS: Record<string, keyof HostCallbacks> = {
  [Methods.hostScore]: 'score',
  [Methods.hostPropose]: 'propose',
  [Methods.hostReadItems]: 'readItems',
};

const DEFAULT_CANCEL_GRACE_MS = 1000;
/**
 * Host requests one call may have open at once. A plugin that sends more without waiting for the
 * answers would keep the deadline paused for ever and grow the host's memory with its queue.
 */
export const MAX_OPEN_HOST_REQUESTS = 32;
/**
 * The deadline pauses while the host answers a callback, so a plugin that keeps calling back could
 * run for ever on a short budget; no call outlives this many times its deadline, callbacks included.
 */
export const HARD_DEADLINE_FACTOR = 10;

/**
 * How long a `shutdown` answer is waited for (less if the plugin's own deadline is shorter). Every
 * command waits this out for a plugin that ignores it, so it is short: a plugin has nothing left
 * to do by then, and its process group is killed either way.
 */
export const SHUTDOWN_WAIT_MS = 1000;

/**
 * One plugin, spoken to over JSON-RPC: deadlines, schema checks both ways, host callbacks routed to
 * the call they belong to, and a single fatal path that kills the plugin and fails every call in
 * flight with an error naming the plugin and the cause. Independent calls take turns (so a
 * plugin->host request is never ambiguous); a call made from inside a host callback nests.
 */
export class PluginChannel {
  readonly pluginId: string;
  private readonly pluginVersion: string | undefined;
  private readonly connection: MessageConnection;
  private readonly stack: CallFrame[] = [];
  /** The call the plugin is answering now (the last one made, as calls nest through host requests). */
  private get innermost(): CallFrame | undefined {
    return this.stack[this.stack.length - 1];
  }
  private turn: Promise<void> = Promise.resolve();
  private failure: PluginFailure | undefined;
  private idleBreach: PluginFailure | undefined;
  private dying: Promise<PluginFailure> | undefined;
  private closing = false;
  private readonly failedListeners: ((failure: PluginFailure) => void)[] = [];
  /** Set once the plugin lists items_ref in its handshake; until then items always travel whole. */
  private sentItems: SentItems | undefined;
  private readonly offerLines: NdjsonMessageReader | undefined;
  /** The offer being passed on to this plugin piece by piece: its id where it came from, and here. */
  private passing: { from: string; id: string } | undefined;
  /** Items the plugin sent ahead of the results that name them (its `$/items`). */
  private readonly itemsAhead = new ReceivedItems();
  /** Offers whose every item was checked against the schema as it arrived, newest last. */
  private readonly checkedOffers = new LruMap<string, true>(ITEMS_CACHE_ENTRIES);

  constructor(
    private readonly transport: ChannelTransport,
    private readonly options: ChannelOptions,
  ) {
    this.pluginId = options.pluginId;
    this.pluginVersion = options.pluginVersion;
    const wire = watchAnswers(transport.reader, transport.writer, {
      onStray: (id) => {
        const method = this.innermost?.method;
        void this.fatal('plugin_not_jsonrpc', `answered a request it was never sent, or answered one twice (id ${JSON.stringify(id).slice(0, 40)})${method ? ` during ${method}` : ''}`, method);
      },
      onMalformed: (id, problem) => {
        const method = this.innermost?.method;
        void this.fatal('plugin_not_jsonrpc', `answered ${method ?? `request ${JSON.stringify(id).slice(0, 40)}`} with ${problem}`, method);
      },
      // The host only sends requests its schemas accept, so a plugin that could not read one is
      // broken, and no later answer can be matched to the call it dropped.
      onUnaddressed: (said) => {
        const method = this.innermost?.method;
        void this.fatal('plugin_not_jsonrpc', `could not read a request${method ? ` during ${method}` : ''} and answered with ${oneLine(said, 300)}`, method);
      },
    });
    this.connection = createMessageConnection(wire.reader, wire.writer);
    this.connection.onError(([error]) => this.onTransportError(error));
    this.connection.onClose(() => this.onClosed());
    this.connection.onRequest((method, params, token) => this.onHostRequest(method, params, token));
    this.connection.onNotification(Methods.hostLog, (params: unknown) => this.onHostNotification('log', 'LogParams', params));
    this.connection.onNotification(Methods.progress, (params: unknown) => this.onHostNotification('progress', 'ProgressParams', params));
    this.connection.onNotification(Methods.items, (params: unknown) => this.itemsAhead.keep(params));
    // Offers are seen line by line only through this transport's own reader.
    this.offerLines = transport.reader instanceof NdjsonMessageReader ? transport.reader : undefined;
    this.offerLines?.onOfferParsed((offer) => this.checkOffer(offer));
    this.connection.listen();
  }

  /** True until the plugin failed or was closed. */
  get alive(): boolean {
    return this.dying === undefined && !this.closing;
  }

  /** The failure that ended this channel, if one did. */
  get failedWith(): PluginFailure | undefined {
    return this.failure;
  }

  onFailed(listener: (failure: PluginFailure) => void): void {
    this.failedListeners.push(listener);
  }

  /**
   * A breach of the protocol met while no call was in flight (an answer sent twice, say): no call
   * fails for it, so whoever used this plugin's answers asks here before acting on them.
   */
  get breachWhileIdle(): PluginFailure | undefined {
    return this.idleBreach;
  }

  /**
   * Sends `items` ahead of the calls that will need them (`$/items`), to a plugin that takes
   * items_ref and does not hold them yet; later calls then name them by id. A notification, so it
   * never waits for a turn: the plugin reads it before any call sent after it.
   */
  offerItems(items: readonly unknown[]): void {
    if (!this.sentItems || !this.alive) return;
    const outgoing = this.sentItems.outgoing({ items });
    if (outgoing.ref !== null || !(outgoing.params as { items_id?: string }).items_id) return;
    this.connection.sendNotification(Methods.items, outgoing.params).catch(() => undefined);
  }

  /**
   * Calls `listener` with each large `$/items` line this plugin sends (a provider's parsed
   * transcript) the moment it is read, before this process has parsed it.
   */
  onItemsOnTheWay(listener: (offer: ItemsOnTheWay) => void | Promise<unknown>): void {
    this.offerLines?.onItemsOnTheWay(listener);
  }

  /**
   * Passes another plugin's items text on to this one ahead of the calls that will name the array,
   * so both processes parse it at once instead of one after the other. The text is not yet known
   * to be the array's: a plugin drops an offer it cannot parse (sdk/serve.ts), and the array is
   * named by reference only once this process parsed exactly that text into it.
   */
  passItemsOn(offer: ItemsOnTheWay): Promise<unknown> | undefined {
    const sent = this.sentItems;
    if (!sent || !this.alive) return undefined;
    if (offer.part === null || offer.part === 0) this.passing = { from: offer.itemsId, id: sent.reserve() };
    else if (this.passing?.from !== offer.itemsId) return undefined;
    const { id } = this.passing!;
    const items = new ItemsText(offer.bytes);
    const params = offer.part === null ? { items_id: id, items } : { items_id: id, part: offer.part, more: offer.more, items };
    void offer.parsed.then((parsed) => {
      if (!parsed) sent.forget(id);
      else if (!offer.more) sent.bind(parsed, id);
    });
    // Settles once the text is written (or could not be): see NdjsonMessageReader.onItemsOnTheWay.
    return this.connection.sendNotification(Methods.items, params).catch(() => undefined);
  }

  /**
   * Checks each `$/items` line against its schema the moment it is parsed, while the plugin is
   * still encoding the next piece, so the result that names the offer has only its other members
   * left to check. An offer that breaks the schema is the plugin's fault whether or not a result
   * ever names it.
   */
  private checkOffer(offer: ParsedOffer): void {
    const violation = checkAgainst(validatorFor('ItemsOfferParams'), offer.params);
    if (violation) {
      // Named by its place in the whole array, not in its piece.
      const pointer = violation.pointer.replace(/^\/items\/(\d+)/, (_, k: string) => `/items/${offer.first + Number(k)}`);
      void this.fatal('plugin_schema_violation', `sent items ahead ($/items) that violate the schema at ${pointer || '/'} (${violation.message})`, this.innermost?.method, pointer);
      return;
    }
    // Every earlier piece passed too: the reader only places pieces in order, and a failed one
    // ended this channel.
    if (offer.more) return;
    this.checkedOffers.set(offer.itemsId, true);
  }

  /** The transport features the plugin listed in its initialize answer (the handshake calls this). */
  useFeatures(features: readonly ProtocolFeature[]): void {
    if (features.includes(ProtocolFeatures.itemsRef)) this.sentItems ??= new SentItems();
  }

  /**
   * Sends one request and returns its validated result; `type` (sdk/protocol.ts) ties the method to
   * its params and result types. With GOBSTOPPER_CHECK_REQUESTS=1 (the test
   * suite sets it) params are also checked against the method's schema before anything is sent
   * (the params as given, before a large items array is swapped for an items_ref): a violation
   * there is a host bug, not the plugin's. It is off by default because the host builds
   * params from data it has already validated, and re-checking a 100,000-item transcript on every
   * strategy call costs more than the call itself.
   */
  async request<P, R>(type: RequestType<P, R, void>, params: P, callbacks: HostCallbacks = {}): Promise<R> {
    const method = type.method;
    const validators = checkRequests() ? methodValidators(method) : undefined;
    if (validators?.params) {
      const violation = checkAgainst(validators.params, params);
      if (violation) {
        throw new GobstopperError('invalid_plugin_request', `gobstopper built a ${method} request for plugin ${this.pluginId} that violates the schema at ${violation.pointer || '/'}: ${violation.message}`, {
          details: { plugin_id: this.pluginId, method, pointer: violation.pointer },
        });
      }
    }
    if (this.isNestedCall()) return this.sendItemsOnce<R>(method, params, callbacks);
    const release = await this.takeTurn();
    try {
      return await this.sendItemsOnce<R>(method, params, callbacks);
    } finally {
      release();
    }
  }

  /**
   * Sends params whose large `items` array this process already holds as an `items_ref` (see
   * sent-items.ts). A plugin that no longer holds it answers ItemsNotCached and gets the items
   * whole, once; the same answer to a request that carried them is the plugin's bug and fails.
   */
  private async sendItemsOnce<R>(method: string, params: unknown, callbacks: HostCallbacks): Promise<R> {
    if (!this.sentItems) return this.send<R>(method, params, callbacks);
    const outgoing = this.sentItems.outgoing(params);
    try {
      return await this.send<R>(method, outgoing.params, callbacks);
    } catch (error) {
      const notHeld = error instanceof PluginFailure && error.code === 'plugin_error' && error.rpcCode === PluginErrorCodes.ItemsNotCached;
      if (!notHeld || outgoing.ref === null) throw error;
      this.sentItems.forget(outgoing.ref);
      return this.send<R>(method, this.sentItems.outgoing(params).params, callbacks);
    }
  }

  /** Whether the plugin answered `shutdown` (with a result) when it was closed; false until then. */
  shutdownAnswered = false;

  /** Asks the plugin to shut down and exit, then makes sure its whole process group is gone. */
  async close(): Promise<void> {
    if (this.closing) return;
    if (this.dying) {
      await this.dying;
      return;
    }
    const release = await this.takeTurn();
    try {
      if (!this.dying) {
        try {
          await this.send(Methods.shutdown, null, {}, Math.min(this.options.timeoutMs, SHUTDOWN_WAIT_MS));
          this.shutdownAnswered = true;
        } catch {
          // A plugin that answers shutdown with an error is still told to exit; one that cannot
          // answer at all is killed below like any other.
        }
        this.closing = true;
        if (!this.dying) await this.connection.sendNotification(Methods.exit).catch(() => undefined);
      }
      this.closing = true;
      if (this.transport.exited) await Promise.race([this.transport.exited, delay(500)]);
      this.connection.dispose();
      await this.transport.terminate();
    } finally {
      release();
    }
  }

  /** Kills the plugin now and fails whatever is in flight with this failure. */
  async kill(code: PluginFailureCode, reason: string, method?: string): Promise<PluginFailure> {
    return this.fatal(code, reason, method);
  }

  private takeTurn(): Promise<() => void> {
    const previous = this.turn;
    let release!: () => void;
    this.turn = new Promise<void>((resolve) => (release = resolve));
    return previous.then(() => release);
  }

  private isNestedCall(): boolean {
    for (let ctx = callContext.getStore(); ctx; ctx = ctx.parent) if (ctx.channel === this) return true;
    return false;
  }

  private async send<R>(method: string, params: unknown, callbacks: HostCallbacks, timeoutMs = this.options.timeoutMs): Promise<R> {
    if (this.dying) throw await this.dying;
    if (this.closing) throw new PluginFailure('plugin_closed', { pluginId: this.pluginId, pluginVersion: this.pluginVersion, method, reason: `was already shut down when ${method} was called` });
    const resultValidator = methodValidators(method)?.result ?? null;
    return new Promise<R>((resolve, reject) => {
      const frame: CallFrame = {
        method,
        timeoutMs,
        callbacks,
        cts: new CancellationTokenSource(),
        remainingMs: timeoutMs,
        startedAt: 0,
        timer: undefined,
        hardTimer: undefined,
        callbacksRunning: 0,
        cancelled: false,
        settled: false,
        fail: (failure) => settle(() => reject(failure)),
      };
      const settle = (finish: () => void) => {
        if (frame.settled) return;
        frame.settled = true;
        if (frame.timer) clearTimeout(frame.timer);
        if (frame.hardTimer) clearTimeout(frame.hardTimer);
        const at = this.stack.indexOf(frame);
        if (at >= 0) this.stack.splice(at, 1);
        frame.cts.dispose();
        finish();
      };
      const timedOut = () => this.failureFor('plugin_timeout', `timed out after ${timeoutMs} ms during ${method}${this.unfinishedLineNote()}`, method);
      this.stack.push(frame);
      this.startClock(frame);
      frame.hardTimer = setTimeout(() => {
        if (!frame.settled) void this.fatal('plugin_timeout', `ran for ${HARD_DEADLINE_FACTOR} times its ${timeoutMs} ms deadline during ${method}, host callbacks included`, method);
      }, timeoutMs * HARD_DEADLINE_FACTOR);
      // No params at all (shutdown) goes out without a params member, as JSON-RPC prefers.
      const sent =
        params === null || params === undefined
          ? this.connection.sendRequest(new RequestType0<unknown, void>(method), frame.cts.token)
          : this.connection.sendRequest(new RequestType<unknown, unknown, void>(method), params, frame.cts.token);
      sent.then(
        (result) => {
          if (frame.settled) return;
          // An answer that arrives after the deadline still fails the call; the plugin survives.
          if (frame.cancelled) return settle(() => reject(timedOut()));
          const itemsRef = (result as { items_ref?: unknown } | null)?.items_ref;
          const restored = this.itemsAhead.restore(result);
          if (restored.problem) {
            void this.fatal('plugin_schema_violation', `answered ${method} with ${restored.problem}`, method, '/items_ref');
            return;
          }
          result = restored.result;
          if (resultValidator) {
            // Items checked as they arrived (checkOffer) are not checked again; the schema gives
            // them the same rules in the offer as in any result that names them.
            const checkedAhead = typeof itemsRef === 'string' && this.checkedOffers.delete(itemsRef);
            const violation = checkAgainst(resultValidator, checkedAhead ? { ...(result as object), items: [] } : result);
            if (violation) {
              void this.fatal('plugin_schema_violation', `answered ${method} with a result that violates the schema at ${violation.pointer || '/'} (${violation.message})`, method, violation.pointer);
              return;
            }
          }
          settle(() => resolve(result as R));
        },
        (error: unknown) => {
          if (frame.settled) return;
          if (frame.cancelled) return settle(() => reject(timedOut()));
          if (error instanceof ResponseError && error.code !== ErrorCodes.PendingResponseRejected && error.code !== ErrorCodes.MessageWriteError) {
            const text = oneLine(String(error.message ?? ''), 300);
            const errno = (error.data as { errno?: unknown } | undefined)?.errno;
            const failure = this.failureFor('plugin_error', `answered ${method} with error ${error.code}: ${text}`, method, undefined, error.code, text, typeof errno === 'string' ? errno : undefined);
            return settle(() => reject(failure));
          }
          if (this.dying) return; // the fatal path fails this frame with the real cause
          if (error instanceof ResponseError) return void this.onClosed();
          void this.fatal('plugin_not_jsonrpc', `answered ${method} with a response that has neither a result nor an error`, method);
        },
      );
    });
  }

  private startClock(frame: CallFrame): void {
    frame.startedAt = Date.now();
    frame.timer = setTimeout(() => this.onDeadline(frame), frame.remainingMs);
  }

  private pauseClock(frame: CallFrame): void {
    frame.callbacksRunning += 1;
    if (frame.callbacksRunning === 1 && frame.timer && !frame.cancelled) {
      clearTimeout(frame.timer);
      frame.timer = undefined;
      frame.remainingMs = Math.max(0, frame.remainingMs - (Date.now() - frame.startedAt));
    }
  }

  private resumeClock(frame: CallFrame): void {
    frame.callbacksRunning -= 1;
    if (frame.callbacksRunning === 0 && !frame.settled && !frame.cancelled && !frame.timer) this.startClock(frame);
  }

  /** Soft deadline: cancel and give the plugin a grace period to answer; then kill the group. */
  private onDeadline(frame: CallFrame): void {
    if (frame.settled) return;
    // Nothing to cancel in a shutdown: a plugin that does not answer it in time is killed now.
    if (frame.method === Methods.shutdown) {
      void this.fatal('plugin_timeout', `did not answer shutdown within ${frame.timeoutMs} ms`, frame.method);
      return;
    }
    frame.cancelled = true;
    frame.cts.cancel();
    frame.timer = setTimeout(() => {
      if (!frame.settled) void this.fatal('plugin_timeout', `timed out after ${frame.timeoutMs} ms during ${frame.method}${this.unfinishedLineNote()}`, frame.method);
    }, this.options.cancelGraceMs ?? DEFAULT_CANCEL_GRACE_MS);
  }

  private async onHostRequest(method: string, params: unknown, token: CancellationToken): Promise<unknown> {
    const slot = HOST_REQUESTS[method];
    if (!slot) return new ResponseError(ErrorCodes.MethodNotFound, `the host has no method ${method}`);
    const frame = this.innermost;
    if (method === Methods.hostReadItems && !this.options.capabilities.includes('read_content')) {
      void this.fatal('capability_denied', `asked for record content (${method}) without the read_content capability in its manifest`, frame?.method);
      return new ResponseError(PluginErrorCodes.CapabilityDenied, 'read_content is not in this plugin\'s manifest');
    }
    if (!frame) return new ResponseError(ErrorCodes.InvalidRequest, `${method} is only answered while the host is waiting on a call to this plugin`);
    const validators = methodValidators(method)!;
    const violation = checkAgainst(validators.params!, params);
    if (violation) return new ResponseError(ErrorCodes.InvalidParams, `${method} params violate the schema at ${violation.pointer || '/'}: ${violation.message}`);
    const callback = frame.callbacks[slot] as ((p: unknown, t: CancellationToken) => unknown) | undefined;
    if (!callback) return new ResponseError(PluginErrorCodes.NotSupported, `${method} is not available during ${frame.method}`);
    if (frame.callbacksRunning >= MAX_OPEN_HOST_REQUESTS) {
      void this.fatal('plugin_output_overflow', `sent more than ${MAX_OPEN_HOST_REQUESTS} host requests at once during ${frame.method} without waiting for the answers`, frame.method);
      return new ResponseError(ErrorCodes.InvalidRequest, `more than ${MAX_OPEN_HOST_REQUESTS} host requests at once`);
    }
    this.pauseClock(frame);
    try {
      const result = await callContext.run({ channel: this, parent: callContext.getStore() }, () => callback.call(frame.callbacks, params, token));
      const resultViolation = checkAgainst(validators.result!, result);
      if (resultViolation) return new ResponseError(ErrorCodes.InternalError, `the host produced an invalid ${method} result at ${resultViolation.pointer || '/'}`);
      return result;
    } catch (error) {
      if (error instanceof ResponseError) return error;
      const message = error instanceof Error ? error.message : String(error);
      return new ResponseError(ErrorCodes.InternalError, `${method} failed in the host: ${oneLine(message, 300)}`);
    } finally {
      this.resumeClock(frame);
    }
  }

  private onHostNotification(slot: 'log' | 'progress', defName: string, raw: unknown): void {
    const params = slot === 'log' ? clipLogParams(raw) : raw;
    const violation = checkAgainst(validatorFor(defName), params);
    if (violation) {
      // A malformed log line is dropped, not fatal, and a notification has no one to answer it; with
      // GOBSTOPPER_DEBUG the plugin's author at least learns why a line never showed.
      if (slot === 'log') this.options.log?.(this.pluginId, { level: 'debug', message: `dropped a host/log notification that breaks LogParams at ${violation.pointer || '/'}: ${violation.message}` });
      return;
    }
    const frame = this.innermost;
    const handler = frame?.callbacks[slot] as ((p: unknown) => void) | undefined;
    try {
      if (handler) handler.call(frame!.callbacks, params);
      else if (slot === 'log') this.options.log?.(this.pluginId, params as LogParams);
    } catch {
      // A failing log sink must not take the plugin call down with it.
    }
  }

  private onTransportError(error: unknown): void {
    if (this.dying || this.closing) return;
    const method = this.innermost?.method;
    if (error instanceof FramingError || (error instanceof Error && error.name === 'FramingError')) {
      const framing = error as FramingError;
      if (framing.reason === 'overflow') {
        const cap = this.options.maxOutputBytes;
        void this.fatal('plugin_output_overflow', `printed a message larger than ${cap ?? 'the'} ${cap ? 'bytes ' : ''}allowed (limits.max_output_bytes)${method ? ` during ${method}` : ''}`, method);
      } else if (framing.reason === 'flood') {
        void this.fatal('plugin_output_overflow', `sent ${framing.message}${method ? ` during ${method}` : ''}; a plugin may send at most ${MAX_NOTIFICATIONS_WITHOUT_ANSWER.count.toLocaleString('en-US')} notifications in a row`, method);
      } else if (framing.reason === 'not_json') {
        void this.fatal('plugin_not_json', `printed a line that is not JSON on stdout${method ? ` during ${method}` : ''}${quotedLine(framing.line)} (logs belong on stderr)`, method);
      } else {
        void this.fatal('plugin_not_jsonrpc', `printed a line that is not a JSON-RPC 2.0 message${method ? ` during ${method}` : ''}${quotedLine(framing.line)}`, method);
      }
      return;
    }
    // A write error means the plugin's stdin is gone: it exited or closed it.
    void this.onClosed();
  }

  private async onClosed(): Promise<void> {
    if (this.dying || this.closing) return;
    const method = this.innermost?.method;
    const exit = this.transport.exited ? await Promise.race([this.transport.exited, delay(2000).then(() => undefined)]) : undefined;
    if (this.dying || this.closing) return;
    const how = !exit
      ? 'closed its output'
      : exit.signal
        ? `was killed by ${exit.signal}`
        : `exited with code ${exit.code}`;
    // A clean exit before the handshake is answered is a program that never started serving (an
    // SDK's serve() not called, a script that only defines its handlers): say so.
    const neverServed = method === 'initialize' && exit?.code === 0 ? ' before answering it: does the program start serving (the SDK\'s serve() called at the end)?' : '';
    void this.fatal('plugin_exited', `${how}${method ? ` during ${method}` : ' while idle'}${neverServed}`, method);
  }

  private failureFor(code: PluginFailureCode, reason: string, method?: string, pointer?: string, rpcCode?: number, rpcMessage?: string, rpcErrno?: string): PluginFailure {
    // A plugin that answered with an error is alive and said what went wrong; its stderr (a
    // traceback its SDK printed) would only bury that. Deaths and kills keep the tail: it is often
    // the only clue.
    const stderrTail = code === 'plugin_error' ? undefined : this.transport.stderrTail?.();
    return new PluginFailure(code, { pluginId: this.pluginId, pluginVersion: this.pluginVersion, method, reason, pointer, rpcCode, rpcMessage, rpcErrno, stderrTail, stderrText: this.transport.stderrText?.() });
  }

  /** "; it printed 29 bytes of a line it never ended: …" when the plugin stopped mid-line, else nothing. */
  private unfinishedLineNote(): string {
    const unfinished = this.offerLines?.unfinishedLine();
    return unfinished ? `; it printed ${unfinished.bytes.toLocaleString('en-US')} bytes of a line it never ended${quotedLine(unfinished.line)}` : '';
  }

  /** The one way a plugin dies: stop listening, kill the group, then fail every call in flight. */
  private fatal(code: PluginFailureCode, reason: string, method?: string, pointer?: string): Promise<PluginFailure> {
    if (this.dying) return this.dying;
    // Between calls, or answering the shutdown that ends them: no call of the host's fails for it.
    const idle = this.closing || this.stack.every((frame) => frame.method === Methods.shutdown);
    this.dying = (async () => {
      this.connection.dispose();
      await this.transport.terminate().catch(() => undefined);
      const failure = this.failureFor(code, reason, method, pointer);
      this.failure = failure;
      if (idle && BREACHES.has(code)) this.idleBreach = failure;
      for (const frame of [...this.stack]) frame.fail(failure);
      for (const listener of this.failedListeners) {
        try {
          listener(failure);
        } catch {
          // A listener's own trouble must not hide the plugin's failure from the callers.
        }
      }
      return failure;
    })();
    return this.dying;
  }
}

/** Failures that say the plugin broke the protocol, as opposed to ending (exit, close, timeout). */
const BREACHES: ReadonlySet<PluginFailureCode> = new Set(['plugin_not_jsonrpc', 'plugin_not_json', 'plugin_schema_violation', 'plugin_output_overflow', 'capability_denied']);

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/**
 * The refused line as the plugin's own words, quoted and escaped: without it an author knows a
 * stray print broke the protocol but not which one (a print before the SDK took stdout over, a
 * child process's output), and the stderr tail the error carries does not hold it.
 */
function quotedLine(line: FramingError['line']): string {
  if (!line) return '';
  return `: ${JSON.stringify(line.start)}${line.clipped ? '…' : ''}`;
}

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function checkRequests(): boolean {
  return process.env.GOBSTOPPER_CHECK_REQUESTS === '1';
}
