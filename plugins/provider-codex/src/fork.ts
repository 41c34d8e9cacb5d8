/**
 * provider/fork_target: where a fork of a rollout goes and how to resume it. The fork sits beside
 * its source, named like the client names rollouts: the source's timestamp (so the name still
 * matches its dated folder) and the new id; render writes the same id into `session_meta`, because
 * the client finds the file by name and then checks the id inside.
 */
import { basename, dirname, join } from 'node:path';
import { invalidInput, resumeDirectory, type ProviderForkTargetParams, type ProviderForkTargetResult } from '../../../sdk/index.js';
import { codexHome } from './discover.js';
import { readEnds } from './ends.js';
import { identifyHead } from './head.js';
import { isValidNewSessionId, parseRolloutName, rolloutFileName, rolloutTimestamp } from './rollout-name.js';
import { absolutePath, statSource, toPluginError } from './source.js';

export function forkTarget(params: ProviderForkTargetParams): ProviderForkTargetResult {
  if (!isValidNewSessionId(params.new_session_id)) throw invalidInput('new_session_id must be 1-128 letters, digits or dashes');
  const at = new Date(params.now);
  if (Number.isNaN(at.getTime())) throw invalidInput('now must be an ISO-8601 time');
  const source = absolutePath(params.path);
  let cwd = params.cwd ?? null;
  if (cwd === null) {
    statSource(source);
    try {
      const ends = readEnds(source);
      cwd = identifyHead(ends.head, ends.headIsPartialLine).cwd;
    } catch (error) {
      throw toPluginError(error, source);
    }
  }
  // The client finds a rollout by id from anywhere; the directory only sets where its tools run.
  const dir = resumeDirectory(cwd);
  const result: ProviderForkTargetResult = {
    target_path: join(dirname(source), rolloutFileName(parseRolloutName(source)?.timestamp ?? rolloutTimestamp(at), params.new_session_id)),
    resume_command: ['codex', 'resume', params.new_session_id],
    resume_cwd: dir.resume_cwd,
  };
  const notes: string[] = dir.note ? [dir.note] : [];
  const home = homeOf(source);
  if (home === null) notes.push(`the rollout is not under a Codex home (<home>/sessions/YYYY/MM/DD/), so \`codex resume\` cannot find the fork; move it into $CODEX_HOME/sessions first`);
  else if (home !== codexHome({})) result.resume_env = { CODEX_HOME: home };
  if (basename(dirname(source)) === 'archived_sessions') notes.push('the source is archived, and so is the fork: `codex resume` in a terminal unarchives it, `codex exec resume` refuses it');
  if (notes.length > 0) result.resume_note = notes.join('; ');
  return result;
}


/**
 * The Codex home a rollout lives in (`<home>/sessions/YYYY/MM/DD/<file>` or
 * `<home>/archived_sessions/<file>`), or null for a file elsewhere. When it is not the home the
 * client uses by default, the resume command names it.
 */
function homeOf(path: string): string | null {
  const day = dirname(path);
  const dated = dirname(dirname(dirname(day)));
  if (basename(dated) === 'sessions') return dirname(dated);
  return basename(day) === 'archived_sessions' ? dirname(day) : null;
}
