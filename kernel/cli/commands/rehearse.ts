import { Args, Flags } from '@oclif/core';
import type { RehearseCommandResult, RehearsalReport } from '../../../schemas/generated/types.js';
import { rehearseSession } from '../../rehearse/session.js';
import { withRuntime } from '../../services/runtime.js';
import { BaseCommand } from '../base-command.js';
import { homeFlags, providerHomes } from '../session-flags.js';

const n = (value: number) => value.toLocaleString('en-US');

export default class Rehearse extends BaseCommand<RehearseCommandResult> {
  static override summary = 'Resume a copy of a session with the real client, offline, and check the context it rebuilds.';
  static override description = `Copies the transcript into a throwaway home and resumes it with the installed client (claude -p --resume, codex exec resume) against a stub model on 127.0.0.1: no credentials, no tokens, telemetry and update checks off, and, where the system allows, no network but loopback. The session itself is never resumed or changed.

Reports whether the client accepted the transcript (and its own error when not), that it resumed the session asked for, the context it rebuilt from the first model request (messages, tool calls paired with results, bytes, estimated tokens), and how that compares with the live context Gobstopper predicts. Both clients silently drop history past a broken link, so an accepted transcript whose rebuilt context is shorter than predicted is a failure. Exit 1 unless the rehearsal passes.

With --baseline, a fork is judged against the session it was made from: the baseline is rehearsed first and the fork must rebuild what it rebuilt, moved by the predicted difference. On a terminal a status line shows while the client runs.`;
  static override examples = [
    '<%= config.bin %> rehearse 7d3f',
    '<%= config.bin %> rehearse ~/.codex/sessions/2026/01/02/rollout-….jsonl --codex-bin ./node_modules/.bin/codex --json',
    '<%= config.bin %> rehearse 9c1e --baseline 7d3f',
  ];
  static override args = { session: Args.string({ description: 'Session id, unique id prefix, or transcript path.', required: true }) };
  static override flags = {
    'claude-bin': Flags.string({ summary: 'The claude executable (default $GOBSTOPPER_CLAUDE_BIN, then PATH).', helpValue: '<path>' }),
    'codex-bin': Flags.string({ summary: 'The codex executable (default $GOBSTOPPER_CODEX_BIN, then PATH).', helpValue: '<path>' }),
    timeout: Flags.integer({ summary: 'Seconds the client may run before it is killed (1-3600).', default: 60, min: 1, max: 3600, helpValue: '<secs>' }),
    network: Flags.string({
      summary: 'auto: a loopback-only network namespace when available; netns: require one; loopback: the host network, 127.0.0.1 only.',
      options: ['auto', 'netns', 'loopback'],
      default: 'auto',
    }),
    baseline: Flags.string({ summary: 'The session this one was forked from; compare against its rehearsal.' }),
    ...homeFlags,
  };

  async run(): Promise<RehearseCommandResult> {
    const { args, flags } = await this.parse(Rehearse);
    // The client runs for seconds; on a terminal a status line says what is going on meanwhile.
    const status = this.statusLine();
    status.show(`rehearse: resuming a copy with the real client${flags.baseline ? ', the baseline first' : ''} (up to ${flags.timeout} s a run)…`);
    const report = await withRuntime({ homes: providerHomes(flags) }, (rt) =>
      rehearseSession(rt, args.session, {
        claudeBin: flags['claude-bin'],
        codexBin: flags['codex-bin'],
        timeoutMs: flags.timeout * 1000,
        network: flags.network as 'auto' | 'netns' | 'loopback',
        baseline: flags.baseline,
      }),
    ).finally(() => status.clear());
    const { workDir: _workDir, ...rehearsal } = report;
    if (!this.jsonEnabled()) this.print(rehearsal);
    if (!rehearsal.ok) process.exitCode = 1;
    return { rehearsal };
  }

  private print(r: RehearsalReport): void {
    this.say(`${r.provider} ${r.session_id} (${r.source_path})`);
    const run = `exit ${r.client.exit_code ?? r.client.signal ?? '?'}, ${(r.client.duration_ms / 1000).toFixed(1)} s, ${r.network === 'netns' ? 'loopback-only namespace' : 'host loopback'}`;
    this.say(`client: ${r.accepted ? 'accepted' : 'not accepted'} (${run}); resumed ${r.resumed_session_id ?? 'no session'}${r.session_matches ? '' : ' (not the one asked for)'}`);
    if (r.client.error_text) this.say(`client said: ${r.client.error_text}`);
    if (r.baseline) this.say(`baseline: ${n(r.baseline.messages)} messages, ~${n(r.baseline.est_tokens)} tokens`);
    if (r.rebuilt) {
      const c = r.rebuilt;
      const pairs = c.unanswered_tool_calls + c.orphan_tool_results === 0 ? 'all paired' : `${c.unanswered_tool_calls} unanswered, ${c.orphan_tool_results} orphaned`;
      this.say(`rebuilt: ${n(c.messages)} messages, ${n(c.tool_calls)} tool calls / ${n(c.tool_results)} results (${pairs}), ${n(c.bytes)} bytes, ~${n(c.est_tokens)} tokens`);
      this.say(`client added: ${n(c.client_added.messages)} messages, ~${n(c.client_added.est_tokens)} tokens; system prompt ${n(c.instructions_bytes)} bytes, ${c.tools_offered} tools`);
    }
    if (r.predicted) {
      const basis = r.prediction_basis === 'baseline' ? 'from the baseline' : 'from the transcript';
      this.say(`predicted (${basis}): ${n(r.predicted.items)} items, ${n(r.predicted.tool_calls)} tool calls, ~${n(r.predicted.est_tokens)} tokens`);
    }
    if (r.comparison) {
      for (const check of r.comparison.checks) {
        if (check.outcome === 'skipped') continue;
        this.say(`  ${check.outcome === 'equal' ? 'ok  ' : 'FAIL'} ${check.name.padEnd(12)} rebuilt ${n(check.rebuilt)}, predicted ${check.predicted === null ? 'n/a' : n(check.predicted)}`);
      }
    }
    this.say(`${r.ok ? 'passed' : r.status.replace('_', ' ')}: ${r.reason}`);
  }
}
