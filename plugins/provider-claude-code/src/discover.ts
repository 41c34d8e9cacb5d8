/**
 * provider/discover, provider/identify and provider/usage: sessions found and sized from file
 * heads and tails only.
 *
 * Layout (dialects.md §1.1): `<home>/projects/<cwd-slug>/<session-id>.jsonl`; sub-agents in
 * `<home>/projects/<slug>/<session-id>/subagents/agent-*.jsonl` (or `agent-*.jsonl` beside the
 * sessions in some versions).
 */
import { lstatSync, type Dirent } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { isDirectory } from '../../../sdk/resume-dir.js';
import type {
  DiscoveredSession,
  ProviderDiscoverParams,
  ProviderDiscoverResult,
  ProviderIdentifyParams,
  ProviderIdentifyResult,
  ProviderUsageParams,
  ProviderUsageResult,
  SessionHandle,
  UnreadableTranscript,
} from '../../../schemas/generated/types.js';
import { listStoreDir } from '../../../sdk/store-dir.js';
import { noteLinked, noteNotListed, notATranscript, noteUnreadable } from '../../../sdk/unreadable.js';
import { absolutePath } from './analysis.js';
import { analyseFileEnds, type EndsAnalysis } from './ends.js';
import { asPluginError } from './errors.js';
import { PROVIDER_ID } from './provider-id.js';
import { handleSessionId } from './session-id.js';

/** The original's cap on files one discovery walks. */
const MAX_FILES = 100_000;

/** `home` param, else $CLAUDE_CONFIG_DIR, else $HOME/.claude. */
export function claudeHome(home: string | null | undefined, env: NodeJS.ProcessEnv = process.env): string {
  if (home) return absolutePath(home);
  if (env.CLAUDE_CONFIG_DIR) return absolutePath(env.CLAUDE_CONFIG_DIR);
  return join(env.HOME || homedir(), '.claude');
}

const isJsonl = (e: Dirent) => e.isFile() && e.name.endsWith('.jsonl');
const isLinkedJsonl = (e: Dirent) => e.isSymbolicLink() && e.name.endsWith('.jsonl');

/**
 * Transcript files under `<home>/projects`, sub-agent files only when asked for. A `.jsonl` that is
 * a symbolic link is passed to `onLink` instead: it is not followed, but the user hears of it. So is
 * what `listStoreDir` cannot list or name, to `onHidden`.
 */
export function listTranscripts(
  projects: string,
  includeSubagents: boolean,
  onLink: (path: string) => void = () => {},
  onHidden: (path: string, reason: string) => void = () => {},
): string[] {
  const out: string[] = [];
  const entries = (dir: string): Dirent[] => listStoreDir(dir, onHidden);
  const wanted = (name: string) => includeSubagents || !name.startsWith('agent-');
  for (const slug of entries(projects)) {
    const slugDir = join(projects, slug.name);
    // A project folder moved elsewhere and linked back is still the client's project folder; the
    // session files inside are opened without following links, as everywhere.
    if (!slug.isDirectory() && !(slug.isSymbolicLink() && isDirectory(slugDir))) continue;
    for (const e of entries(slugDir)) {
      if (out.length >= MAX_FILES) return out;
      if (isJsonl(e)) {
        if (wanted(e.name)) out.push(join(slugDir, e.name));
      } else if (isLinkedJsonl(e)) {
        if (wanted(e.name)) onLink(join(slugDir, e.name));
      } else if (includeSubagents && e.isDirectory()) {
        const sub = join(slugDir, e.name, 'subagents');
        for (const f of entries(sub)) {
          if (isJsonl(f) && out.length < MAX_FILES) out.push(join(sub, f.name));
          else if (isLinkedJsonl(f)) onLink(join(sub, f.name));
        }
      }
    }
  }
  return out;
}

function handle(path: string, a: EndsAnalysis): SessionHandle {
  return {
    provider: PROVIDER_ID,
    session_id: handleSessionId(path, a.kind, a.sessionId),
    path,
    cwd: a.cwd,
    kind: a.kind,
    bytes: a.size,
    mtime_ms: a.mtimeMs,
    title: a.title,
  };
}

export function discoverSessions(params: ProviderDiscoverParams): ProviderDiscoverResult {
  const projects = join(claudeHome(params.home), 'projects');
  const includeSubagents = params.include_subagents === true;
  const maxAgeMs = params.max_age_secs === null || params.max_age_secs === undefined ? null : params.max_age_secs * 1000;
  const now = Date.now();
  const sessions: DiscoveredSession[] = [];
  const unreadable: UnreadableTranscript[] = [];
  for (const path of listTranscripts(
    projects,
    includeSubagents,
    (link) => noteLinked(unreadable, link),
    (path, reason) => noteNotListed(unreadable, path, reason),
  )) {
    try {
      if (maxAgeMs !== null) {
        const st = lstatSync(path);
        if (now - st.mtimeMs > maxAgeMs) continue;
      }
      const a = analyseFileEnds(path);
      if (a.claudeRecords === 0) {
        if (a.size > 0) noteNotListed(unreadable, path, notATranscript('Claude Code'));
        continue;
      }
      if (a.kind === 'subagent' && !includeSubagents) continue;
      const reported = a.usage.context_state === 'reported';
      sessions.push({
        session: handle(path, a),
        usage: a.usage,
        estimated_context_tokens: reported ? null : a.estimatedContextTokens,
        bytes_read: a.bytesRead,
      });
    } catch (error) {
      // One unreadable file (a symlink, no permission) must not hide the others, and the host says
      // why it is missing; one that vanished since it was listed is simply gone.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') noteUnreadable(unreadable, path, error);
    }
  }
  sessions.sort((a, b) => (b.session.mtime_ms ?? 0) - (a.session.mtime_ms ?? 0));
  const searched = [{ path: projects, exists: isDirectory(projects) }];
  return unreadable.length > 0 ? { sessions, unreadable, searched } : { sessions, searched };
}

export function identifyTranscript(params: ProviderIdentifyParams): ProviderIdentifyResult {
  const path = absolutePath(params.path);
  let a: EndsAnalysis;
  try {
    a = analyseFileEnds(path);
  } catch (error) {
    throw asPluginError(error, path);
  }
  const matches = a.claudeRecords > 0 && a.claudeRecords > a.foreignRecords;
  return { matches, session: matches ? handle(path, a) : null };
}

export function tailUsage(params: ProviderUsageParams): ProviderUsageResult {
  const path = absolutePath(params.path);
  try {
    const a = analyseFileEnds(path, { head: false });
    return { usage: a.usage, bytes_read: a.bytesRead };
  } catch (error) {
    throw asPluginError(error, path);
  }
}
