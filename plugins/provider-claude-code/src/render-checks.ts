/**
 * What the tree of a source must allow before a candidate of it is accepted: a Claude session the
 * client can resume, with one reading, whose elide targets are all live elidable tool results.
 */
import { invalidInput } from '../../../sdk/serve.js';
import { isElidable } from '../../../sdk/tokens.js';
import { requireClaude, type Analysis } from './analysis.js';
import { toItem } from './items.js';
import { refuseAmbiguous } from './parse.js';
import type { RenderPlan } from './render-plan.js';

export function checkRenderable(path: string, a: Analysis, plan: RenderPlan): void {
  requireClaude(a.scan);
  if (a.kind !== 'session') throw invalidInput(`${path} is a ${a.kind} file, not a session the client can resume`);
  refuseAmbiguous(a);
  checkTargets(a, plan);
}

/** Every elide target must be a live tool result with an elidable payload: nothing else is edited. */
function checkTargets(a: Analysis, plan: RenderPlan): void {
  for (const line of plan.elide.keys()) {
    if (!Number.isSafeInteger(line) || line < 0 || line >= a.scan.table.length) throw invalidInput(`an elide edit targets line ${line + 1}, past the end of the transcript`);
    if (!isElidable(toItem(a.scan.table, line, a.branch))) throw invalidInput(`line ${line + 1} is not an elidable tool result on the live branch`);
  }
}
