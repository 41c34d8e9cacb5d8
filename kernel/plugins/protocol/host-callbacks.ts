import type { CancellationToken } from 'vscode-jsonrpc/node';
import type * as T from '../../../schemas/generated/types.js';

/**
 * What the host offers a plugin while one of its calls is in flight. Supplied per call: a
 * plugin->host request is answered by the callbacks of the host->plugin request it belongs to.
 * A callback that is absent answers the plugin with a clear protocol error.
 */
export interface HostCallbacks {
  /** host/score: scores from the scorer the policy names. */
  score?(params: T.HostScoreParams, token: CancellationToken): Promise<T.HostScoreResult> | T.HostScoreResult;
  /** host/propose: another strategy's plan, validated by the host. */
  propose?(params: T.HostProposeParams, token: CancellationToken): Promise<T.HostProposeResult> | T.HostProposeResult;
  /** host/read_items: bounded record content; only reachable for bundles with read_content. */
  readItems?(params: T.HostReadItemsParams, token: CancellationToken): Promise<T.HostReadItemsResult> | T.HostReadItemsResult;
  /** host/log notifications. */
  log?(params: T.LogParams): void;
  /** $/progress notifications. */
  progress?(params: T.ProgressParams): void;
}

/** Takes host/log lines that no call in flight takes itself, named by the plugin that sent them. */
export type PluginLogSink = (pluginId: string, params: T.LogParams) => void;
