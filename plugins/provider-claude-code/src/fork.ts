/**
 * provider/fork_target: a fork is `<new-id>.jsonl` beside the source, because the client looks a
 * session up by file name in the project folder of the cwd it runs in (realclients.md §1.2), and
 * is resumed from that cwd.
 */
import { basename, dirname, join } from 'node:path';
import { resumeDirectory } from '../../../sdk/resume-dir.js';
import type { ProviderForkTargetParams, ProviderForkTargetResult } from '../../../schemas/generated/types.js';
import { absolutePath } from './analysis.js';
import { claudeHome } from './discover.js';
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
  const target = join(dirname(path), `${id}.jsonl`);
  // By absolute path the client finds the fork from any directory (realclients.md §1.2 case L);
  // by id only from the directory whose project folder holds it, which a cwd read from the tail
  // (a later `cd sub`) or a transcript kept outside the projects folder does not give.
  const dir = resumeDirectory(cwd);
  const result: ProviderForkTargetResult = { target_path: target, resume_command: ['claude', '--resume', target], resume_cwd: dir.resume_cwd };
  if (dir.note) result.resume_note = dir.note;
  const home = homeOf(path);
  if (home !== null && home !== claudeHome(null)) result.resume_env = { CLAUDE_CONFIG_DIR: home };
  return result;
}

/**
 * The Claude home a session file lives in (`<home>/projects/<project>/<id>.jsonl`), or null for a
 * file elsewhere. When it is not the home the client uses by default, the resume command names it.
 */
function homeOf(path: string): string | null {
  const projects = dirname(dirname(path));
  return basename(projects) === 'projects' ? dirname(projects) : null;
}
