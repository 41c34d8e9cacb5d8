/**
 * The plugin protocol in one place: every method name, its params and result types, and the error
 * codes. Host and plugins both import this, so a renamed method is a compile error on both sides.
 */
import { NotificationType, NotificationType0, RequestType, RequestType0 } from 'vscode-jsonrpc/node';
import type * as T from '../schemas/generated/types.js';

export const PROTOCOL_VERSION = 1;
export const SUPPORTED_PROTOCOL_VERSIONS = [1] as const;

/** Application error codes (schemas/v1/rpc.schema.json#/$defs/PluginErrorCode). */
export const PluginErrorCodes = {
  /** The source bytes differ from the hash the host bound the call to. */
  SourceChanged: -32001,
  /** The input is not something this plugin can work with (not its format, malformed records). */
  InvalidInput: -32002,
  /** The plugin asked for something its manifest does not allow. */
  CapabilityDenied: -32003,
  /** A size or count limit was exceeded. */
  LimitExceeded: -32004,
  /** The method or id is not provided by this plugin. */
  NotSupported: -32005,
  /** An `items_ref` names an items array this process does not hold (see sdk/items-cache.ts); the host resends the items. */
  ItemsNotCached: -32006,
  /** The request was cancelled by the host. */
  RequestCancelled: -32800,
} as const;

/**
 * Transport features a plugin may list in its initialize answer (schemas/v1/rpc.schema.json
 * ProtocolFeature). Method params are the same either way; a feature only changes how they travel.
 */
export const ProtocolFeatures = {
  /** Send a large `items` array once per process, then refer to it by id (sdk/items-cache.ts). */
  itemsRef: 'items_ref',
} as const satisfies Record<string, T.ProtocolFeature>;

export const Methods = {
  initialize: 'initialize',
  shutdown: 'shutdown',
  exit: 'exit',
  providerDiscover: 'provider/discover',
  providerIdentify: 'provider/identify',
  providerUsage: 'provider/usage',
  providerParse: 'provider/parse',
  providerRender: 'provider/render',
  providerVerify: 'provider/verify',
  providerForkTarget: 'provider/fork_target',
  strategyPropose: 'strategy/propose',
  scorerScore: 'scorer/score',
  hostScore: 'host/score',
  hostPropose: 'host/propose',
  hostReadItems: 'host/read_items',
  hostLog: 'host/log',
  progress: '$/progress',
  /** Host -> plugin notification: items sent ahead of the calls that will name them by items_ref. */
  items: '$/items',
} as const;

export type MethodName = (typeof Methods)[keyof typeof Methods];

// Host -> plugin requests.
export const Initialize = new RequestType<T.InitializeParams, T.InitializeResult, void>(Methods.initialize);
export const Shutdown = new RequestType0<null, void>(Methods.shutdown);
export const Exit = new NotificationType0(Methods.exit);
export const ProviderDiscover = new RequestType<T.ProviderDiscoverParams, T.ProviderDiscoverResult, void>(Methods.providerDiscover);
export const ProviderIdentify = new RequestType<T.ProviderIdentifyParams, T.ProviderIdentifyResult, void>(Methods.providerIdentify);
export const ProviderUsage = new RequestType<T.ProviderUsageParams, T.ProviderUsageResult, void>(Methods.providerUsage);
export const ProviderParse = new RequestType<T.ProviderParseParams, T.Transcript, void>(Methods.providerParse);
export const ProviderRender = new RequestType<T.ProviderRenderParams, T.ProviderRenderResult, void>(Methods.providerRender);
export const ProviderVerify = new RequestType<T.ProviderVerifyParams, T.ProviderVerifyResult, void>(Methods.providerVerify);
export const ProviderForkTarget = new RequestType<T.ProviderForkTargetParams, T.ProviderForkTargetResult, void>(Methods.providerForkTarget);
export const StrategyPropose = new RequestType<T.StrategyProposeParams, T.StrategyProposeResult, void>(Methods.strategyPropose);
export const ScorerScore = new RequestType<T.ScorerScoreParams, T.ScorerScoreResult, void>(Methods.scorerScore);

// Plugin -> host requests and notifications.
export const HostScore = new RequestType<T.HostScoreParams, T.HostScoreResult, void>(Methods.hostScore);
export const HostPropose = new RequestType<T.HostProposeParams, T.HostProposeResult, void>(Methods.hostPropose);
export const HostReadItems = new RequestType<T.HostReadItemsParams, T.HostReadItemsResult, void>(Methods.hostReadItems);
export const HostLog = new NotificationType<T.LogParams>(Methods.hostLog);
export const Progress = new NotificationType<T.ProgressParams>(Methods.progress);

/**
 * Which schema $def describes each method's params and result; the host validates both directions
 * with the generated validators named `validate<Def>`.
 */
export const MethodSchemas: Record<string, { params: string | null; result: string | null }> = {
  [Methods.initialize]: { params: 'InitializeParams', result: 'InitializeResult' },
  [Methods.shutdown]: { params: null, result: null },
  [Methods.providerDiscover]: { params: 'ProviderDiscoverParams', result: 'ProviderDiscoverResult' },
  [Methods.providerIdentify]: { params: 'ProviderIdentifyParams', result: 'ProviderIdentifyResult' },
  [Methods.providerUsage]: { params: 'ProviderUsageParams', result: 'ProviderUsageResult' },
  [Methods.providerParse]: { params: 'ProviderParseParams', result: 'ProviderParseResult' },
  [Methods.providerRender]: { params: 'ProviderRenderParams', result: 'ProviderRenderResult' },
  [Methods.providerVerify]: { params: 'ProviderVerifyParams', result: 'ProviderVerifyResult' },
  [Methods.providerForkTarget]: { params: 'ProviderForkTargetParams', result: 'ProviderForkTargetResult' },
  [Methods.strategyPropose]: { params: 'StrategyProposeParams', result: 'StrategyProposeResult' },
  [Methods.scorerScore]: { params: 'ScorerScoreParams', result: 'ScorerScoreResult' },
  [Methods.hostScore]: { params: 'HostScoreParams', result: 'HostScoreResult' },
  [Methods.hostPropose]: { params: 'HostProposeParams', result: 'HostProposeResult' },
  [Methods.hostReadItems]: { params: 'HostReadItemsParams', result: 'HostReadItemsResult' },
  [Methods.hostLog]: { params: 'LogParams', result: null },
  [Methods.progress]: { params: 'ProgressParams', result: null },
  [Methods.items]: { params: 'ItemsOfferParams', result: null },
};
