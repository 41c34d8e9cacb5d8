import { Args, Flags } from '@oclif/core';
import type { EvalStudyCommandResult, EvalStudyPrepareResult, RetentionStudyReport } from '../../../schemas/generated/types.js';
import { renderStudyLines } from '../../eval/study-output.js';
import { STUDY_LIMITS } from '../../eval/study-manifest.js';
import { MIB } from '../../../sdk/limits.js';
import { evalStudy } from '../../services/eval-study.js';
import { shellWord } from '../../text/shell-word.js';
import { withRuntime } from '../../services/runtime.js';
import { BaseCommand } from '../base-command.js';
import { policyFlags } from '../plan-flags.js';
import { ProgressBar } from '../render/progress-bar.js';
import { homeFlags, providerHomes } from '../session-flags.js';

const isPrepared = (r: EvalStudyCommandResult): r is EvalStudyPrepareResult => 'study_run' in r;

/**
 * The replay to run next, as a command to paste: every word shell-quoted, with the homes the session
 * was found under (without them an id names no session, or another one).
 */
function nextCommand(session: string, manifest: string, flags: { 'claude-home'?: string; 'codex-home'?: string; 'provider-home'?: string[] }, against?: string): string {
  const words = ['gobstopper', 'eval-study', session, '--manifest', manifest];
  if (flags['claude-home'] !== undefined) words.push('--claude-home', flags['claude-home']);
  if (flags['codex-home'] !== undefined) words.push('--codex-home', flags['codex-home']);
  for (const home of flags['provider-home'] ?? []) words.push('--provider-home', home);
  const command = words.map(shellWord).join(' ');
  // The placeholder is for the reader to replace, so it is not quoted as a word to paste.
  return against === undefined ? command : `${command} --against ${against}`;
}

export default class EvalStudy extends BaseCommand<EvalStudyCommandResult> {
  static override summary = 'Measure how well typed masking keeps constraints, procedures and open tasks, on private copies.';
  static override description = `The typed-retention study. First write a manifest of the spans to track (--prepare-manifest <new file>: a gobstopper-retention-v1 file of hashes, byte spans, JSON pointers, kinds and opaque ids, never transcript text; at most 16 heuristic candidates per kind, elidable records first). Review it if you like, then:

--manifest <file> replays three arms for --rounds rounds (1-10, default 10) with the policy's trigger and floor: plain observation masking; typed masking, which never elides a record holding a constraint, procedure or open task; and typed digest, which carries those spans verbatim on the state card. Each round is scored by kind: exact text present, present with the same origin, still at its source pointer, and the lexical tier (at least 75% of a check's content words in one live slot). Verify errors the source already had are counted apart from new ones.

--manifest <file> --against <file | vault:<sha256>> scores an already-compacted file (a fork made by apply, or an archived snapshot) without replaying. It must come from the session: the session itself (an archived state of it), a file sharing its first record, or a fork the vault's receipts trace back to it (apply's forks are); it must be of the session's provider and hold no more context than the session, as every compaction of it does. --rounds, --trigger, --floor, --preset and --config shape the replay and are refused with --against and --prepare-manifest.

Everything runs on private copies; no model or provider service is called and nothing in the session's store, the vault or the config changes. Limits: 64 MiB replay source (512 MiB to prepare or audit), 1 MiB manifest, 256 checks, 4 KiB spans. A replay draws a progress bar of its rounds on a terminal; piped runs and --json stay quiet.`;
  static override examples = [
    '<%= config.bin %> eval-study 7d3f --prepare-manifest study.json',
    '<%= config.bin %> eval-study 7d3f --manifest study.json --rounds 3 --trigger 50000 --floor 10000',
    '<%= config.bin %> eval-study 7d3f --manifest study.json --against ~/.claude/projects/-work-app/9b1e….jsonl --json',
    '<%= config.bin %> eval-study 7d3f --manifest study.json --against vault:5c0e…',
  ];
  static override args = {
    session: Args.string({ description: 'Session id, unique id prefix, transcript path, or vault:<sha256> of an archived snapshot.', required: true }),
  };
  // oclif's generated line would offer --against as an alternative to --manifest; it needs it.
  static override usage = [
    '<%= command.id %> SESSION --prepare-manifest <new file> [--json]',
    '<%= command.id %> SESSION --manifest <file> [--rounds <1-10>] [--trigger <tokens>] [--floor <tokens>] [--preset <name>] [--config <path>] [--json]',
    '<%= command.id %> SESSION --manifest <file> --against <file | vault:<sha256>> [--json]',
  ];
  static override flags = {
    'prepare-manifest': Flags.string({ summary: 'Write a heuristic retention manifest for the session to this new file, then stop.', helpValue: '<new file>', exclusive: ['manifest', 'against'] }),
    manifest: Flags.string({ summary: 'The gobstopper-retention-v1 manifest to measure (bound to this session\u2019s exact bytes).', helpValue: '<file>' }),
    rounds: Flags.integer({ summary: 'Replay rounds per arm, 1-10 (default 10).', helpValue: '<1-10>' }),
    against: Flags.string({ summary: 'Score this compacted file (or vault:<sha256>) against the manifest instead of replaying.', helpValue: '<file | vault:<sha256>>', dependsOn: ['manifest'] }),
    trigger: policyFlags.trigger,
    floor: policyFlags.floor,
    preset: policyFlags.preset,
    config: policyFlags.config,
    ...homeFlags,
  };

  async run(): Promise<EvalStudyCommandResult> {
    const { args, flags } = await this.parse(EvalStudy);
    const bar = new ProgressBar(this.progressStream(), 'rounds');
    const result = await withRuntime({ homes: providerHomes(flags) }, (rt) =>
      evalStudy(rt, args.session, {
        onProgress: (p) => bar.update(p),
        prepareManifest: flags['prepare-manifest'],
        manifest: flags.manifest,
        rounds: flags.rounds,
        against: flags.against,
        trigger: flags.trigger,
        floor: flags.floor,
        preset: flags.preset,
        configPath: flags.config,
      }),
    ).finally(() => bar.finish());
    if (!this.jsonEnabled()) {
      if (isPrepared(result)) {
        const kinds = Object.entries(result.by_kind).map(([kind, n]) => `${kind} ${n}`).join(', ');
        this.say(`wrote ${result.checks} heuristic check${result.checks === 1 ? '' : 's'} (${kinds}) to ${result.manifest_path}`);
        if (result.replay_fits) this.say(`next: ${nextCommand(args.session, result.manifest_path, flags)}`);
        else {
          // The replay the usual next line runs would refuse this session: only a compaction of it can be scored.
          this.say(`the session is over the ${STUDY_LIMITS.replaySourceBytes / MIB} MiB a replay reads; score a compaction of it instead, a fork apply made from it, by its path or as vault:<sha256>:`);
          this.say(`next: ${nextCommand(args.session, result.manifest_path, flags, '<fork path | vault:<sha256>>')}`);
        }
      } else for (const line of renderStudyLines(result as RetentionStudyReport, { width: this.tableWidth() })) this.say(line);
    }
    return result;
  }
}
