import { createHash } from 'node:crypto';
import { createReadStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { GobstopperError, usageError } from '../../errors.js';
import { removeOnExit } from '../../exit-cleanup.js';
import { formatInt } from '../../text/numbers.js';
import type {
  ContextComparison,
  RebuiltContext,
  RehearsalNetwork,
  RehearsalPrediction,
  RehearsalPredictionBasis,
  RehearsalProvider,
  RehearsalReport,
  RehearsalStatus,
} from '../../../schemas/generated/types.js';
import { predictionFromBaseline } from '../context/baseline.js';
import { compareContext, describeMismatch } from '../context/compare.js';
import { analyzeModelRequest } from '../context/rebuilt-context.js';
import { isModelRequest, type RecordedRequest } from '../stub-server/recorded-request.js';
import { startStubServer, type StubServer } from '../stub-server/server.js';
import { resolveClientBin } from './client-bin.js';
import { SESSION_ID_PATTERN, type ClientLaunch, type PreparedClient } from './client-launch.js';
import { runClientGroup, type ClientOutcome } from './client-process.js';
import { clientErrorText, clientReportedFailure, resumedSessionId } from './client-report.js';
import { prepareClaude } from './claude-layout.js';
import { prepareCodex } from './codex-layout.js';
import { bridgedLaunch, PORT_PLACEHOLDER } from './netns-bridge.js';
import { detectLoopbackNamespace, type NamespaceSupport, type NetworkChoice } from './network.js';

/** The prompt the rehearsal resumes with; it marks where the client's own additions begin. */
export const REHEARSAL_PROBE = 'gobstopper rehearsal probe: reply with one short line.';
export const DEFAULT_REHEARSAL_TIMEOUT_MS = 60_000;
/** Unix socket paths are limited to about 108 bytes. */
const MAX_SOCKET_PATH = 100;
const MAX_REASON = 800;

export interface RehearseParams {
  provider: RehearsalProvider;
  /** The transcript to rehearse; it is only read (copied), never resumed in place. */
  path: string;
  sessionId: string;
  /**
   * The session's recorded working directory. Accepted from callers that have it, not used: the
   * client runs from a private directory so that the project's hooks and MCP servers never start.
   */
  cwd?: string | null;
  /** What Gobstopper predicts the client will rebuild; without it the report has no comparison. */
  predicted?: RehearsalPrediction | null;
  /**
   * A transcript to rehearse first (a fork's source) with its own prediction: the candidate is then
   * compared with the context the client rebuilt from it, moved by the predicted difference.
   */
  baseline?: RehearsalBaseline | null;
  clientBin?: string;
  timeoutMs?: number;
  /** auto: a loopback-only namespace when the system allows it, else plain loopback. */
  network?: NetworkChoice;
  /** Fixed stub port on 127.0.0.1 (0, the default, picks a free one). */
  stubPort?: number;
  probe?: string;
  /** Where PATH and GOBSTOPPER_CLAUDE_BIN / GOBSTOPPER_CODEX_BIN are read from. */
  env?: NodeJS.ProcessEnv;
  /** Keep the private work directory for inspection (its path is returned in `workDir`). */
  keepWorkDir?: boolean;
}

export interface RehearsalBaseline {
  path: string;
  sessionId: string;
  predicted: RehearsalPrediction;
}

export interface RehearseResult extends RehearsalReport {
  /** Set only when keepWorkDir was asked for. */
  workDir?: string;
}

async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

function checkParams(params: RehearseParams): string {
  if (params.provider !== 'claude_code' && params.provider !== 'codex') {
    throw usageError('unknown_provider', `rehearsal supports claude_code and codex, not ${String(params.provider)}`);
  }
  if (!SESSION_ID_PATTERN.test(params.sessionId)) {
    throw usageError('invalid_session_id', `session id ${JSON.stringify(params.sessionId)} is not 1-128 letters, digits and dashes, so a client cannot be asked to resume it`);
  }
  const timeout = params.timeoutMs ?? DEFAULT_REHEARSAL_TIMEOUT_MS;
  if (!Number.isInteger(timeout) || timeout < 100 || timeout > 3_600_000) {
    throw usageError('invalid_timeout', 'rehearsal timeout must be between 100 ms and 1 hour');
  }
  const port = params.stubPort ?? 0;
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw usageError('invalid_port', `stub port must be 0-65535, not ${port}`);
  const path = resolve(params.path);
  let stat;
  try {
    stat = statSync(path);
  } catch {
    throw new GobstopperError('source_unreadable', `cannot read ${path}`);
  }
  if (!stat.isFile()) throw new GobstopperError('source_unreadable', `${path} is not a regular file`);
  return path;
}

async function chooseNetwork(choice: NetworkChoice, env: NodeJS.ProcessEnv) {
  if (choice === 'loopback') return { network: 'loopback' as const, support: null };
  const support = await detectLoopbackNamespace(env);
  if (support.available) return { network: 'netns' as const, support };
  if (choice === 'netns') throw new GobstopperError('netns_unavailable', `a loopback-only network namespace is not available: ${support.reason}`);
  return { network: 'loopback' as const, support: null };
}

/**
 * Resumes a copy of a transcript with the real client, offline, against the stub model server, and
 * reports whether the client accepted it, which session it resumed, the context it rebuilt, and how
 * that compares with the prediction. The source is only read; the client sees a private home, no
 * real credentials and, where the system allows, no network but loopback.
 */
export async function rehearse(params: RehearseParams): Promise<RehearseResult> {
  const sourcePath = checkParams(params);
  const env = params.env ?? process.env;
  const clientBin = resolveClientBin(params.provider, params.clientBin, env);
  const baseline = params.baseline ?? null;
  if (baseline && !params.predicted) throw usageError('baseline_without_prediction', 'a baseline rehearsal needs a prediction for the candidate too');
  const baselinePath = baseline ? checkParams({ ...params, path: baseline.path, sessionId: baseline.sessionId }) : null;
  const { network, support } = await chooseNetwork(params.network ?? 'auto', env);
  const run = { params, clientBin, network, support };

  let predicted = params.predicted ?? null;
  let baselineRebuilt: RebuiltContext | null = null;
  if (baseline && baselinePath && predicted) {
    const base = await runOnce(run, baselinePath, baseline.sessionId, false);
    const baseReport = buildReport({ ...base, params: { ...params, sessionId: baseline.sessionId, predicted: baseline.predicted, baseline: null }, basis: 'direct', baselineRebuilt: null });
    if (!baseReport.accepted || !baseReport.session_matches || !baseReport.rebuilt) {
      throw new GobstopperError('baseline_failed', `the baseline ${baselinePath} did not rehearse (${baseReport.status}): ${baseReport.reason}`);
    }
    baselineRebuilt = baseReport.rebuilt;
    predicted = predictionFromBaseline(baselineRebuilt, baseline.predicted, predicted);
  }
  const outcome = await runOnce(run, sourcePath, params.sessionId, params.keepWorkDir ?? false);
  const report = buildReport({
    ...outcome,
    params: { ...params, predicted },
    basis: predicted === null ? 'none' : baselineRebuilt ? 'baseline' : 'direct',
    baselineRebuilt,
  });
  return outcome.workDir ? { ...report, workDir: outcome.workDir } : report;
}

interface RunContext {
  params: RehearseParams;
  clientBin: string;
  network: RehearsalNetwork;
  support: Extract<NamespaceSupport, { available: true }> | null;
}

interface RunOutcome {
  sourcePath: string;
  sourceSha: string;
  sourceUnchanged: boolean;
  clientBin: string;
  network: RehearsalNetwork;
  outcome: ClientOutcome;
  requests: readonly RecordedRequest[];
  probe: string;
  workDir: string | null;
}

/** One client run over a private copy of `sourcePath`: homes, stub, namespace, deadline, cleanup. */
async function runOnce(run: RunContext, sourcePath: string, sessionId: string, keepWorkDir: boolean): Promise<RunOutcome> {
  const { params, clientBin, support } = run;
  const timeoutMs = params.timeoutMs ?? DEFAULT_REHEARSAL_TIMEOUT_MS;
  const probe = params.probe ?? REHEARSAL_PROBE;
  const sourceSha = await sha256File(sourcePath);
  const workDir = mkdtempSync(join(tmpdir(), 'gobstopper-rehearse-'));
  // An interrupted rehearsal must not leave its copy of the session behind.
  const forget = keepWorkDir ? () => undefined : removeOnExit(workDir);
  let stub: StubServer | null = null;
  try {
    const layoutInput = { workDir, sourcePath, sessionId, clientBin, probe };
    const prepared: PreparedClient = params.provider === 'claude_code' ? prepareClaude(layoutInput) : prepareCodex(layoutInput);
    let launch: ClientLaunch;
    if (support) {
      const socketPath = join(workDir, 'stub.sock');
      if (socketPath.length > MAX_SOCKET_PATH) {
        throw new GobstopperError('workdir_too_long', `the temporary directory path is too long for a Unix socket: ${workDir}`);
      }
      stub = await startStubServer({ socketPath });
      launch = bridgedLaunch(prepared.launch(`http://127.0.0.1:${PORT_PLACEHOLDER}`), support, workDir, socketPath, params.stubPort ?? 0);
    } else {
      stub = await startStubServer({ port: params.stubPort ?? 0 });
      launch = prepared.launch(stub.baseUrl);
    }
    const outcome = await runClientGroup(launch, timeoutMs);
    await stub.close();
    return {
      sourcePath,
      sourceSha,
      sourceUnchanged: (await sha256File(sourcePath)) === sourceSha,
      clientBin,
      network: run.network,
      outcome,
      requests: stub.requests,
      probe,
      workDir: keepWorkDir ? workDir : null,
    };
  } finally {
    await stub?.close();
    if (!keepWorkDir) rmSync(workDir, { recursive: true, force: true });
    forget();
  }
}

interface ReportInput extends RunOutcome {
  params: RehearseParams;
  basis: RehearsalPredictionBasis;
  baselineRebuilt: RebuiltContext | null;
}

function firstModelTurn(requests: readonly RecordedRequest[], probe: string): { request: RecordedRequest | null; count: number } {
  const turns = requests.filter(isModelRequest);
  const withProbe = turns.find((r) => JSON.stringify(r.body).includes(probe));
  return { request: withProbe ?? turns[0] ?? null, count: turns.length };
}

function buildReport(input: ReportInput): RehearsalReport {
  const { params, outcome, probe } = input;
  const provider = params.provider;
  const { request, count } = firstModelTurn(input.requests, probe);
  const rebuilt: RebuiltContext | null = request ? analyzeModelRequest(request, probe) : null;
  const predicted = params.predicted ?? null;
  const comparison: ContextComparison | null = rebuilt && predicted ? compareContext(rebuilt, predicted) : null;
  const reportedFailure = clientReportedFailure(provider, outcome.stdout);
  const accepted = !outcome.timedOut && outcome.exitCode === 0 && count > 0 && !reportedFailure;
  const resumed = resumedSessionId(provider, request, outcome.stdout);
  const sessionMatches = resumed === params.sessionId;
  const errorText = clientErrorText(provider, outcome.stdout, outcome.stderr, !accepted || outcome.exitCode !== 0);

  let status: RehearsalStatus;
  let reason: string;
  if (outcome.timedOut) {
    status = 'timed_out';
    reason = `the client did not finish within ${params.timeoutMs ?? DEFAULT_REHEARSAL_TIMEOUT_MS} ms and was killed`;
  } else if (!accepted) {
    status = 'rejected';
    const how = outcome.exitCode === null ? `was killed by ${outcome.signal ?? 'a signal'}` : `exited ${outcome.exitCode}`;
    const what = count === 0 ? ' without sending a model request' : '';
    reason = `the client ${how}${what}${errorText ? `: ${errorText}` : ' and gave no reason'}`;
  } else if (!sessionMatches) {
    status = 'wrong_session';
    reason = `the client resumed ${resumed ?? 'an unidentified session'} instead of ${params.sessionId}`;
  } else if (comparison && !comparison.equal) {
    status = 'context_mismatch';
    reason = `the client accepted the transcript but rebuilt a ${comparison.verdict === 'shorter' ? 'shorter' : 'different'} context than predicted: ${describeMismatch(comparison)}`;
  } else {
    status = 'passed';
    reason = comparison
      ? `accepted; the rebuilt context matches the prediction (${formatInt(rebuilt!.messages)} messages, ~${formatInt(rebuilt!.est_tokens)} tokens)`
      : `accepted; rebuilt ${formatInt(rebuilt!.messages)} messages, ~${formatInt(rebuilt!.est_tokens)} tokens (no prediction to compare with)`;
  }
  if (!input.sourceUnchanged) reason = `the source changed while it was rehearsed (a live session?); ${reason}`;
  return {
    provider,
    session_id: params.sessionId,
    source_path: input.sourcePath,
    source_sha256: input.sourceSha,
    source_unchanged: input.sourceUnchanged,
    status,
    ok: status === 'passed' && input.sourceUnchanged,
    reason: reason.length > MAX_REASON ? reason.slice(0, MAX_REASON - 1) + '…' : reason,
    accepted,
    resumed_session_id: resumed,
    session_matches: sessionMatches,
    network: input.network,
    client: {
      bin: input.clientBin,
      exit_code: outcome.exitCode,
      signal: outcome.signal,
      timed_out: outcome.timedOut,
      duration_ms: outcome.durationMs,
      error_text: errorText,
    },
    requests: input.requests.length,
    model_requests: count,
    rebuilt,
    prediction_basis: predicted === null ? 'none' : input.basis,
    predicted,
    baseline: input.baselineRebuilt,
    comparison,
  };
}
