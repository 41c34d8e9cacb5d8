/**
 * Named fault points, so crash-safety is tested rather than assumed: a test makes a run throw, or
 * die outright (SIGKILL, no cleanup), at a chosen step and then checks that nothing partial is
 * visible and that a retry completes or names what to repair.
 *
 * `GOBSTOPPER_FAULT=<step>` throws at that step; `GOBSTOPPER_FAULT=<step>:kill` kills the process
 * there; `<step>:term` sends it SIGTERM and goes on, so the signal lands at the next wait on I/O as
 * a user's Ctrl-C would. Several steps may be listed, comma-separated. In-process callers pass a
 * hook instead.
 *
 * Steps raised by the vault and publication services:
 *   vault.after_read, vault.after_chunks, vault.after_manifest, vault.before_index,
 *   staging.after_create, publish.before_link, publish.after_link,
 *   receipt.after_pending, receipt.before_complete, undo.before_reindex, export.after_create
 * Callers such as the apply spine raise their own steps through the same function.
 */
import { GobstopperError } from '../errors.js';

export type FaultHook = (step: string) => void;

export class InjectedFault extends GobstopperError {
  constructor(readonly step: string) {
    super('fault_injected', `injected fault at ${step}`);
  }
}

function envHook(env: NodeJS.ProcessEnv): FaultHook | undefined {
  const spec = env.GOBSTOPPER_FAULT;
  if (!spec) return undefined;
  const rules = new Map<string, 'throw' | 'kill' | 'term'>();
  for (const part of spec.split(',')) {
    const [step, mode] = part.trim().split(':');
    if (step) rules.set(step, mode === 'kill' || mode === 'term' ? mode : 'throw');
  }
  return (step) => {
    const mode = rules.get(step);
    if (mode === 'term') return void process.kill(process.pid, 'SIGTERM');
    if (mode === 'kill') process.kill(process.pid, 'SIGKILL');
    // SIGKILL to oneself is delivered before kill() returns; the throw only guards odd platforms.
    if (mode) throw new InjectedFault(step);
  };
}

/** Raises the fault configured for `step`, if any: the given hook first, else GOBSTOPPER_FAULT. */
export function faultPoint(step: string, hook?: FaultHook, env?: NodeJS.ProcessEnv): void {
  (hook ?? envHook(env ?? process.env))?.(step);
}
