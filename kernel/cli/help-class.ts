/**
 * oclif's help, with the commands of hidden groups left out of the listings. oclif hides a hidden
 * topic but still lists its commands; its own `plugins` installer is hidden so that `gobstopper
 * plugin` (bundles) is the one a reader finds. `gobstopper plugins --help` still answers.
 */
import { Help, type Command } from '@oclif/core';

export default class GobstopperHelp extends Help {
  protected override get sortedCommands(): Command.Loadable[] {
    const hidden = new Set(this.config.topics.filter((t) => t.hidden).map((t) => t.name));
    return super.sortedCommands.filter((c) => !hidden.has(c.id.split(':')[0]!));
  }
}
