/**
 * provider/fork_target: a fork is `<new-id>.jsonl` beside the source, because the client looks a
 * session up by file name in the project folder of the cwd it runs in (realclients.md §1.2), and
 * is resumed from that cwd.
 */
import { dirname, join } from 'node:path';
import type { ProviderForkTargetParams, ProviderForkTargetResult } from '../../../schemas/generated/types.js';
import { absolutePath } from './analysis.js';
import { analyseFileEnds } from './ends.js';
import { asPluginError } from './errors.js';
import { requireFileId } from './session-id.js';

export function forkTarget(params: ProviderForkTargetParams): ProviderForkTargetResult {
  const path = absolutePath(params.path);
  const id = requireFileId(params.new_session_id, 'new_session_id');
  let cwd = params.cwd ?? null;
  if (cwd === null) {
    try {
      cwd = analyseFileEnds(path).cwd;
    } catch (error) {
      throw asPluginError(error, path);
    }
  }
  return { target_path: join(dirname(path), `${id}.jsonl`), resume_command: ['claude', '--resume', id], resume_cwd: cwd };
}
