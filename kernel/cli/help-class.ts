/**
 * oclif's help, with the commands of hidden groups left out of the listings. oclif hides a hidden
 * topic but still lists its commands; its own `plugins` installer is hidden so that `gobstopper
 * plugin` (bundles) is the one a reader finds. `gobstopper plugins --help` still answers.
 */
import { Help, type Command, type Interfaces } from '@oclif/core';

/** Whether a command belongs to a hidden group (a hidden topic), unless `asked` names that group. */
export function inHiddenGroup(config: Interfaces.Config, commandId: string, asked = ''): boolean {
  const group = commandId.split(':')[0]!;
  return config.topics.some((t) => t.hidden && t.name === group && !asked.startsWith(t.name));
}

export default class GobstopperHelp extends Help {
  protected override get sortedCommands(): Command.Loadable[] {
    return super.sortedCommands.filter((c) => !inHiddenGroup(this.config, c.id));
  }
}
