/** Index-line labels the kernel gives itself; see kernel/cli/render/label-help.ts for all of them. */

/** The state undo archives before it restores another; undo never picks one by itself. */
export const PRE_UNDO_LABEL = 'pre-undo';
