/** `eval --rehearse`: the real client resumes each rewritten copy offline. */
import type * as T from '../../schemas/generated/types.js';
import { GobstopperError } from '../errors.js';
import type { Runtime } from './runtime.js';

export interface RehearsalSource {
  /** The private copy of the source. */
  path: string;
  sessionId: string;
  cwd: string | null;
  items: readonly T.TranscriptItem[];
}

type RehearseModule = typeof import('../rehearse/index.js');

export interface ClientBins {
  claude_code?: string;
  codex?: string;
}

/**
 * `--rehearse`: the real client resumes each rewritten copy offline. As apply's rehearsal does, the
 * source is rehearsed first (once) and each candidate is compared with what the client rebuilt from
 * it, moved by the difference the plan predicts: item estimates count whole stored records, which
 * the client never sends as such. A missing client, an unsupported provider or a source the client
 * will not resume gives one note and no rehearsal, never a failed eval.
 */
export class CandidateRehearsal {
  note: string | null = null;
  private baseline: Promise<{ rebuilt: T.RebuiltContext; predicted: T.RehearsalPrediction } | null> | null = null;

  private constructor(
    private readonly runtime: Runtime,
    private readonly provider: 'claude_code' | 'codex',
    private readonly source: RehearsalSource,
    private readonly mod: RehearseModule,
    private readonly clientBin: string | undefined,
  ) {}

  /** null with a note when the client cannot run at all. */
  static async prepare(runtime: Runtime, provider: string, source: RehearsalSource, bins: ClientBins = {}): Promise<{ rehearsal: CandidateRehearsal | null; note: string | null }> {
    if (provider !== 'claude_code' && provider !== 'codex') {
      return { rehearsal: null, note: `resume rehearsal supports claude_code and codex sessions, not ${provider}; rows show the projected context only` };
    }
    // Loaded only when asked for: it is the one part that runs real clients.
    const mod = await import('../rehearse/index.js');
    const clientBin = bins[provider];
    try {
      mod.resolveClientBin(provider, clientBin, runtime.env);
    } catch (error) {
      if (error instanceof GobstopperError && error.code === 'client_missing') return { rehearsal: null, note: `${error.message}; rows show the projected context only` };
      throw error;
    }
    return { rehearsal: new CandidateRehearsal(runtime, provider, source, mod, clientBin), note: null };
  }

  private async rehearseSource() {
    const predicted = this.mod.predictionFromItems(this.source.items);
    const report = await this.mod.rehearse({ provider: this.provider, path: this.source.path, sessionId: this.source.sessionId, cwd: this.source.cwd, predicted, env: this.runtime.env, clientBin: this.clientBin });
    if (!report.accepted || !report.session_matches || !report.rebuilt) {
      this.note = `the client did not resume the source itself (${report.status}): ${report.reason}; rows show the projected context only`;
      return null;
    }
    return { rebuilt: report.rebuilt, predicted };
  }

  /** The client's verdict on one rendered candidate, or null when the source could not be rehearsed. */
  async candidate(stagingPath: string, items: readonly T.TranscriptItem[]): Promise<T.EvalRehearsal | null> {
    const base = await (this.baseline ??= this.rehearseSource());
    if (!base) return null;
    const predicted = this.mod.predictionFromBaseline(base.rebuilt, base.predicted, this.mod.predictionFromItems(items));
    const report = await this.mod.rehearse({ provider: this.provider, path: stagingPath, sessionId: this.source.sessionId, cwd: this.source.cwd, predicted, env: this.runtime.env, clientBin: this.clientBin });
    return {
      status: report.status,
      ok: report.ok,
      client_context_tokens: report.rebuilt?.est_tokens ?? null,
      client_total_tokens: report.rebuilt?.total_est_tokens ?? null,
      predicted_context_tokens: predicted.est_tokens,
      reason: report.reason,
    };
  }
}
