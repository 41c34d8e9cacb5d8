import { Args } from '@oclif/core';
import type { VerifyOutput } from '../../../schemas/generated/types.js';
import { withRuntime } from '../../services/runtime.js';
import { verifySession } from '../../services/verify.js';
import { printableText } from '../../text/human.js';
import { BaseCommand } from '../base-command.js';
import { homeFlags, providerHomes } from '../session-flags.js';

export default class Verify extends BaseCommand<VerifyOutput> {
  static override summary = 'Check that a session will resume: exit 1 when it has errors.';
  static override description = `Runs the provider's resume-validity checks over the whole transcript: tool calls paired with their results on the live branch, parent links, duplicate ids, the leaf the client will resume, Codex window and ordinal rules, a torn final line. The real clients silently drop history past a broken link, so a file that "resumes" can still have lost context; verify reports it.`;
  static override examples = ['<%= config.bin %> verify 7d3f', '<%= config.bin %> verify ~/.claude/projects/-home-me-app/3f2a….jsonl --json'];
  static override args = { session: Args.string({ description: 'Session id, unique id prefix, or transcript path.', required: true }) };
  static override flags = { ...homeFlags };

  async run(): Promise<VerifyOutput> {
    const { args, flags } = await this.parse(Verify);
    const result = await withRuntime({ homes: providerHomes(flags) }, (rt) => verifySession(rt, args.session));
    if (!this.jsonEnabled()) {
      if (result.findings.length === 0) this.say(`${printableText(result.path)}: clean (${result.record_count} records)`);
      for (const f of result.findings) {
        const where = f.line_index === null || f.line_index === undefined ? '' : ` line ${f.line_index + 1}`;
        this.say(`${f.severity === 'error' ? 'error' : f.severity === 'warning' ? 'warn ' : 'info '}${where} [${f.code}] ${f.message}`);
      }
      if (result.findings.length) this.say(`${result.errors} error(s), ${result.warnings} warning(s) in ${printableText(result.path)}`);
    }
    if (result.errors > 0) process.exitCode = 1;
    return result;
  }
}
