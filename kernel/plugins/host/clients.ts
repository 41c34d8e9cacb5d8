import { dirname, isAbsolute } from 'node:path';
import type * as T from '../../../schemas/generated/types.js';
import type { RequestType } from 'vscode-jsonrpc/node';
import {
  PluginErrorCodes,
  ProviderDiscover,
  ProviderForkTarget,
  ProviderIdentify,
  ProviderParse,
  ProviderRender,
  ProviderUsage,
  ProviderVerify,
  ScorerScore,
  StrategyPropose,
} from '../../../sdk/protocol.js';
import { GobstopperError } from '../../errors.js';
import { isFilesystemCode } from '../../filesystem-codes.js';
import type { HostCallbacks } from '../protocol/host-callbacks.js';
import { PluginFailure } from '../protocol/plugin-failure.js';
import type { RunningBundle } from './running-bundle.js';

type WithoutId<P, K extends string> = Omit<P, K> & Partial<Record<K, string>>;

function merged(base: HostCallbacks, extra: HostCallbacks | undefined): HostCallbacks {
  return extra ? { ...base, ...extra } : base;
}

/**
 * What a provider says about the file it was given (it changed while read, it is not a transcript
 * it can read, it is over a limit) is a fact about the session, not a failure of the plugin: it
 * reaches the user under the kernel's own code, in the provider's words.
 */
const SESSION_ANSWERS: ReadonlyMap<number, string> = new Map([
  [PluginErrorCodes.SourceChanged, 'source_changed'],
  [PluginErrorCodes.InvalidInput, 'invalid_transcript'],
  [PluginErrorCodes.LimitExceeded, 'transcript_too_large'],
]);

function asSessionError(error: unknown): unknown {
  if (!(error instanceof PluginFailure) || error.code !== 'plugin_error' || error.rpcCode === undefined || !error.rpcMessage) return error;
  // A disk that filled under the provider's write is the machine's state, as one under the
  // kernel's is: the same errno code (`enospc`), which watch tries again and the events log counts as io.
  if (isFilesystemCode(error.rpcErrno)) return new GobstopperError(error.rpcErrno!.toLowerCase(), error.rpcMessage, { details: error.details, cause: error });
  const code = SESSION_ANSWERS.get(error.rpcCode);
  if (code === undefined) return error;
  const advice = code === 'source_changed' ? '; run the command again on the session as it is now' : '';
  return new GobstopperError(code, `${error.rpcMessage}${advice}`, { details: error.details, cause: error });
}

/** Why `transcript`'s items do not name each of its records at most once, or null. */
export function lineIndexProblem(transcript: Pick<T.Transcript, 'items' | 'record_count'>): string | null {
  const records = transcript.record_count;
  // Sized by the items, not by record_count: a provider's count is not trusted to fit in memory.
  const seen = new Set<number>();
  for (const item of transcript.items) {
    const line = item.line_index;
    if (line >= records) return `an item has line index ${line}, past the transcript's ${records} records`;
    if (seen.has(line)) return `two items have line index ${line}`;
    seen.add(line);
  }
  return null;
}

/** Typed calls to one provider id of a running bundle; the kernel never sees JSON-RPC. */
export class ProviderClient {
  constructor(
    readonly running: RunningBundle,
    readonly info: T.ProviderInfo,
    private readonly callbacks: HostCallbacks = {},
  ) {}

  get id(): string {
    return this.info.id;
  }

  private call<Params extends { provider_id: string }, R>(type: RequestType<Params, R, void>, params: WithoutId<Params, 'provider_id'>, callbacks?: HostCallbacks): Promise<R> {
    return this.running.channel.request(type, { ...params, provider_id: this.info.id } as Params, merged(this.callbacks, callbacks)).catch((error: unknown) => {
      throw asSessionError(error);
    });
  }

  /**
   * A provider speaks for its own sessions only. The host routes a session by the provider its
   * handle names, shows it and records it under that name: a handle naming another provider would
   * send this provider's file to that one (which refuses it, or worse) and label it as that one's
   * in detect, watch and the vault.
   */
  private ownSessions<R>(method: string, sessions: readonly (T.SessionHandle | null | undefined)[], result: R): R {
    const foreign = sessions.find((s) => s && s.provider !== this.info.id);
    if (!foreign) return result;
    const pluginId = this.running.bundle.manifest.id;
    throw new GobstopperError('invalid_provider_session', `provider ${this.info.id} (plugin ${pluginId}) answered ${method} with a session of provider ${foreign.provider} (${foreign.path}); a provider may only report its own sessions`, {
      details: { provider: this.info.id, plugin_id: pluginId, claimed_provider: foreign.provider, path: foreign.path },
    });
  }

  discover(params: WithoutId<T.ProviderDiscoverParams, 'provider_id'> = {}, callbacks?: HostCallbacks) {
    return this.call(ProviderDiscover, params, callbacks).then((r) => this.ownSessions(ProviderDiscover.method, r.sessions.map((s) => s.session), r));
  }
  identify(params: WithoutId<T.ProviderIdentifyParams, 'provider_id'>, callbacks?: HostCallbacks) {
    return this.call(ProviderIdentify, params, callbacks).then((r) => this.ownSessions(ProviderIdentify.method, [r.session], r));
  }
  usage(params: WithoutId<T.ProviderUsageParams, 'provider_id'>, callbacks?: HostCallbacks) {
    return this.call(ProviderUsage, params, callbacks);
  }
  parse(params: WithoutId<T.ProviderParseParams, 'provider_id'>, callbacks?: HostCallbacks): Promise<T.Transcript> {
    return this.call(ProviderParse, params, callbacks).then((transcript) => {
      this.ownSessions(ProviderParse.method, [transcript.session], transcript);
      const problem = lineIndexProblem(transcript);
      if (problem === null) return transcript;
      // Every later rule reads items by line: a provider that numbers them wrongly is named here,
      // before a strategy's plan over them is blamed for it.
      const pluginId = this.running.bundle.manifest.id;
      throw new GobstopperError('invalid_provider_transcript', `provider ${this.info.id} (plugin ${pluginId}) returned items that are not one per record: ${problem}`, {
        details: { provider: this.info.id, plugin_id: pluginId },
      });
    });
  }
  render(params: WithoutId<T.ProviderRenderParams, 'provider_id'>, callbacks?: HostCallbacks) {
    return this.call(ProviderRender, params, callbacks);
  }
  verify(params: WithoutId<T.ProviderVerifyParams, 'provider_id'>, callbacks?: HostCallbacks) {
    return this.call(ProviderVerify, params, callbacks);
  }
  /**
   * A fork always lives beside its source. A target elsewhere is the provider's answer's fault,
   * and is refused as the answer arrives: before apply archives or renders anything for it.
   */
  forkTarget(params: WithoutId<T.ProviderForkTargetParams, 'provider_id'>, callbacks?: HostCallbacks): Promise<T.ProviderForkTargetResult> {
    return this.call(ProviderForkTarget, params, callbacks).then((target) => {
      const path = target.target_path;
      const where = !isAbsolute(path) ? 'a path that is not absolute' : dirname(path) !== dirname(params.path) ? `a path outside the source's directory ${dirname(params.path)}` : null;
      if (where === null) return target;
      const pluginId = this.running.bundle.manifest.id;
      throw new GobstopperError('invalid_provider_fork_target', `provider ${this.info.id} (plugin ${pluginId}) answered provider/fork_target with ${where} (${path}); a fork goes beside its source, and nothing was published`, {
        details: { provider: this.info.id, plugin_id: pluginId, target_path: path },
      });
    });
  }
}

export class StrategyClient {
  constructor(
    readonly running: RunningBundle,
    readonly info: T.StrategyInfo,
    private readonly callbacks: HostCallbacks = {},
  ) {}

  get id(): string {
    return this.info.id;
  }

  propose(params: WithoutId<T.StrategyProposeParams, 'strategy_id'>, callbacks?: HostCallbacks): Promise<T.StrategyProposeResult> {
    return this.running.channel.request(StrategyPropose, { ...params, strategy_id: this.info.id }, merged(this.callbacks, callbacks));
  }
}

export class ScorerClient {
  constructor(
    readonly running: RunningBundle,
    readonly info: T.ScorerInfo,
    private readonly callbacks: HostCallbacks = {},
  ) {}

  get id(): string {
    return this.info.id;
  }

  score(params: WithoutId<T.ScorerScoreParams, 'scorer_id'>, callbacks?: HostCallbacks): Promise<T.ScorerScoreResult> {
    return this.running.channel.request(ScorerScore, { ...params, scorer_id: this.info.id }, merged(this.callbacks, callbacks));
  }
}
