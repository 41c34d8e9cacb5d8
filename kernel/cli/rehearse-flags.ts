/** The client executables apply, eval and watch take with --rehearse. */
import { Flags } from '@oclif/core';

export const rehearseBinFlags = {
  'claude-bin': Flags.string({ summary: 'With --rehearse: the claude executable (default $GOBSTOPPER_CLAUDE_BIN, then PATH).', helpValue: '<path>', dependsOn: ['rehearse'] }),
  'codex-bin': Flags.string({ summary: 'With --rehearse: the codex executable (default $GOBSTOPPER_CODEX_BIN, then PATH).', helpValue: '<path>', dependsOn: ['rehearse'] }),
};
