import { GobstopperError } from '../../errors.js';

/** Why a plugin call failed. Every one but plugin_error and a cancelled timeout kills the process group. */
export type PluginFailureCode =
  | 'plugin_timeout'
  | 'plugin_output_overflow'
  | 'plugin_not_json'
  | 'plugin_not_jsonrpc'
  | 'plugin_exited'
  | 'plugin_schema_violation'
  | 'capability_denied'
  | 'plugin_error'
  | 'plugin_handshake_failed'
  | 'plugin_spawn_failed'
  | 'plugin_not_served'
  | 'plugin_closed';

export interface PluginFailureInit {
  pluginId: string;
  /** The manifest's version: several versions of one bundle may be installed. */
  pluginVersion?: string;
  /** The host->plugin method in flight, when there was one. */
  method?: string;
  /** What went wrong, as the rest of a sentence that starts with "plugin <id>@<version> ". */
  reason: string;
  stderrTail?: string;
  /** Everything of the plugin's stderr that was kept: shown only under GOBSTOPPER_DEBUG. */
  stderrText?: string;
  /** JSON pointer of a schema violation. */
  pointer?: string;
  /** The JSON-RPC error code the plugin answered with (plugin_error). */
  rpcCode?: number;
  /** The message of that error answer, on one line. */
  rpcMessage?: string;
  /** The errno name a plugin gave in its error's data (`{"errno": "ENOSPC"}`) for a failure of the file system. */
  rpcErrno?: string;
}

/**
 * A failed plugin call. The message names the plugin and the cause, then the tail of what the
 * plugin wrote to stderr; details carry the same in fields.
 */
export class PluginFailure extends GobstopperError {
  readonly pluginId: string;
  readonly method: string | undefined;
  readonly stderrTail: string;
  readonly stderrText: string;
  readonly rpcCode: number | undefined;
  readonly rpcMessage: string | undefined;
  readonly rpcErrno: string | undefined;

  constructor(code: PluginFailureCode, init: PluginFailureInit) {
    const tail = init.stderrTail?.trim() ?? '';
    const named = init.pluginVersion ? `${init.pluginId}@${init.pluginVersion}` : init.pluginId;
    super(code, `plugin ${named} ${init.reason}${tail ? ` (stderr: ${tail})` : ''}`, {
      details: {
        plugin_id: init.pluginId,
        ...(init.pluginVersion ? { plugin_version: init.pluginVersion } : {}),
        ...(init.method ? { method: init.method } : {}),
        ...(init.pointer !== undefined ? { pointer: init.pointer } : {}),
        ...(init.rpcCode !== undefined ? { rpc_code: init.rpcCode } : {}),
        ...(tail ? { stderr_tail: tail } : {}),
      },
    });
    this.name = 'PluginFailure';
    this.pluginId = init.pluginId;
    this.method = init.method;
    this.stderrTail = tail;
    this.stderrText = init.stderrText ?? '';
    this.rpcCode = init.rpcCode;
    this.rpcMessage = init.rpcMessage;
    this.rpcErrno = init.rpcErrno;
  }

  declare readonly code: PluginFailureCode;
}
