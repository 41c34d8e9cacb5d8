/**
 * `apply --rehearse`: before a candidate is published, resume it with the real client against the
 * local stub and require that it is accepted under the new id and rebuilds the predicted context.
 */
import type { RehearsalReport } from '../../schemas/generated/types.js';
import { GobstopperError } from '../errors.js';
import { predictionFromItems } from '../rehearse/context/prediction.js';
import { isRehearsable, resolveClientBin } from '../rehearse/run/client-bin.js';
import { rehearse } from '../rehearse/run/rehearse.js';
import type { ApplyOptions } from './apply.js';
import type { ClientBins } from './candidate-rehearsal.js';
import type { PlannedSession } from './plan.js';
import type { Runtime } from './runtime.js';

function rehearsable(provider: string): 'claude_code' | 'codex' {
  if (provider !== 'claude_code' && provider !== 'codex') {
    throw new GobstopperError('rehearsal_unsupported', `resume rehearsal supports claude_code and codex sessions, not ${provider}`);
  }
  return provider;
}

/**
 * Throws what the rehearsal itself would throw before it starts: a provider without a client, or a
 * client that is not installed. apply asks before it archives or logs anything, so a rehearsal that
 * could never run leaves every file as it was.
 */
export function rehearsalReady(runtime: Runtime, planned: PlannedSession, clientBin?: string): void {
  resolveClientBin(rehearsable(planned.session.provider), clientBin, runtime.env);
}

export async function rehearseCandidate(runtime: Runtime, stagingPath: string, planned: PlannedSession, outputSessionId: string, clientBin?: string): Promise<RehearsalReport> {
  const provider = rehearsable(planned.session.provider);
  const candidate = await planned.provider.parse({ path: stagingPath });
  // The source is rehearsed first: the candidate must rebuild what the source rebuilt, moved by
  // the difference the plan predicts. Item estimates count whole stored records (envelopes and UI
  // copies included), which the client never sends, so they are compared as a difference only.
  const report = await rehearse({
    provider,
    path: stagingPath,
    sessionId: outputSessionId,
    cwd: planned.session.cwd ?? null,
    predicted: predictionFromItems(candidate.items),
    baseline: { path: planned.session.path, sessionId: planned.session.session_id, predicted: predictionFromItems(planned.transcript.items) },
    env: runtime.env,
    clientBin,
  });
  if (!report.ok) {
    throw new GobstopperError('rehearsal_failed', `the real client did not accept the candidate (${report.status}): ${report.reason}; nothing was published`, {
      details: { status: report.status },
    });
  }
  const { workDir: _kept, ...rehearsal } = report;
  return rehearsal;
}

/**
 * apply's rehearsal hooks: each session is resumed with its provider's client, the one in `bins`
 * when given (else its environment variable, then PATH).
 */
export function rehearsalHooks(runtime: Runtime, bins: ClientBins): Required<Pick<ApplyOptions, 'rehearse' | 'rehearsalReady'>> {
  const binFor = (planned: PlannedSession) => {
    const provider = planned.session.provider;
    return isRehearsable(provider) ? bins[provider] : undefined;
  };
  return {
    rehearse: (staging, planned, outputSessionId) => rehearseCandidate(runtime, staging, planned, outputSessionId, binFor(planned)),
    rehearsalReady: (planned) => rehearsalReady(runtime, planned, binFor(planned)),
  };
}
