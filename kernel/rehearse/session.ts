/**
 * `rehearse <session|path>` as a service: resolve the session through the provider plugins, predict
 * its live context from the provider's parse, and rehearse it (optionally against a baseline, the
 * session a fork was made from).
 */
import type { SessionHandle, Transcript } from '../../schemas/generated/types.js';
import { usageError } from '../errors.js';
import { requireResumableSession } from '../policy/context.js';
import type { ProviderHomes, ProviderPort } from '../sessions/provider-port.js';
import { resolveSession } from '../sessions/selector.js';
import { predictionFromItems } from './context/prediction.js';
import type { NetworkChoice } from './run/network.js';
import { rehearse, type RehearseResult } from './run/rehearse.js';

/** What this service needs from a runtime: the provider plugins and the home overrides. */
export interface RehearsalRuntime {
  readonly env: NodeJS.ProcessEnv;
  readonly homes: ProviderHomes;
  providers(): Promise<ProviderPort[]>;
  provider(id: string): Promise<{ parse(params: { path: string }): Promise<Transcript> }>;
}

export interface RehearseSessionOptions {
  claudeBin?: string;
  codexBin?: string;
  timeoutMs?: number;
  network?: NetworkChoice;
  /** The session this one was forked from: its rehearsal becomes the yardstick. */
  baseline?: string;
}

async function resolveWithTranscript(runtime: RehearsalRuntime, selector: string): Promise<{ session: SessionHandle; transcript: Transcript }> {
  const { session } = await resolveSession(selector, await runtime.providers(), runtime.homes);
  if (session.provider !== 'claude_code' && session.provider !== 'codex') {
    throw usageError('rehearsal_unsupported', `resume rehearsal supports claude_code and codex sessions, not ${session.provider}`);
  }
  const transcript = await (await runtime.provider(session.provider)).parse({ path: session.path });
  return { session, transcript };
}

export async function rehearseSession(runtime: RehearsalRuntime, selector: string, options: RehearseSessionOptions = {}): Promise<RehearseResult> {
  const { session, transcript } = await resolveWithTranscript(runtime, selector);
  requireResumableSession(session);
  const provider = session.provider as 'claude_code' | 'codex';
  let baseline = null;
  if (options.baseline !== undefined) {
    const base = await resolveWithTranscript(runtime, options.baseline);
    requireResumableSession(base.session);
    if (base.session.provider !== session.provider) {
      throw usageError('baseline_mismatch', `the baseline is a ${base.session.provider} session, the rehearsed one ${session.provider}`);
    }
    baseline = { path: base.session.path, sessionId: base.session.session_id, predicted: predictionFromItems(base.transcript.items) };
  }
  return rehearse({
    provider,
    path: session.path,
    sessionId: session.session_id,
    cwd: session.cwd ?? null,
    predicted: predictionFromItems(transcript.items),
    baseline,
    clientBin: provider === 'claude_code' ? options.claudeBin : options.codexBin,
    timeoutMs: options.timeoutMs,
    network: options.network,
    env: runtime.env,
  });
}
