import { Args } from '@oclif/core';
import { forkSession, type ForkResult } from '../../services/fork.js';
import { withRuntime } from '../../services/runtime.js';
import { printableText } from '../../text/human.js';
import { BaseCommand } from '../base-command.js';
import { resumeLines } from '../render/resume-lines.js';
import { homeFlags, providerHomes } from '../session-flags.js';

export default class Fork extends BaseCommand<ForkResult> {
  static override summary = 'Copy a session under a fresh id, beside the original, and print how to resume it.';
  static override description = `Snapshots the source into the vault, writes an identical copy whose session id fields carry a new id (nothing else changes), verifies it, and publishes it next to the source without overwriting anything. A session with verify errors the copy would keep is refused: that fork would not resume either (an error the new id repairs, such as a rollout file name that disagrees with the id inside, does not count), and so is a sub-agent's transcript or a composite, which no client resumes as a session. On a terminal a status line shows which step is running.`;
  static override examples = ['<%= config.bin %> fork 7d3f'];
  static override args = { session: Args.string({ description: 'Session id, unique id prefix, or transcript path.', required: true }) };
  static override flags = { ...homeFlags };

  async run(): Promise<ForkResult> {
    const { args, flags } = await this.parse(Fork);
    const status = this.statusLine();
    status.show('fork: checking and archiving the session…');
    const result = await withRuntime({ homes: providerHomes(flags) }, (rt) => forkSession(rt, args.session, { onStep: (step) => status.show(`fork: ${step} the copy…`) })).finally(() =>
      status.clear(),
    );
    const r = result.receipt;
    this.say(`forked ${result.session.session_id} -> ${r.output_session_id}`);
    this.say(printableText(r.path));
    this.sayResume(resumeLines('resume', r));
    return result;
  }
}
