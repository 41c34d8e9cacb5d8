/**
 * Where the providers looked, when nothing turned up there. A client home set to a path that does
 * not exist (a mistyped CLAUDE_CONFIG_DIR, a --codex-home of another machine) lists no sessions and
 * matches no id; saying where the search went tells that apart from a home with nothing in it.
 */
import type * as T from '../../schemas/generated/types.js';

/** One folder a provider reported searching. */
export interface SearchedStore extends T.SearchedFolder {
  provider: string;
}

/** The providers none of whose folders exist, each with the folders it looked in. */
export function missingStores(searched: readonly SearchedStore[]): Array<{ provider: string; paths: string[] }> {
  const byProvider = new Map<string, SearchedStore[]>();
  for (const s of searched) {
    const folders = byProvider.get(s.provider);
    if (folders) folders.push(s);
    else byProvider.set(s.provider, [s]);
  }
  return [...byProvider]
    .filter(([, folders]) => folders.every((f) => !f.exists))
    .map(([provider, folders]) => ({ provider, paths: folders.map((f) => f.path) }));
}

/**
 * "claude_code looked in /x/projects, which does not exist (…)", or null when every provider found
 * at least one of its folders.
 */
export function missingStoresNote(searched: readonly SearchedStore[]): string | null {
  const missing = missingStores(searched);
  if (missing.length === 0) return null;
  const each = missing.map(({ provider, paths }) => `${provider} looked in ${paths.join(' and ')}, which ${paths.length === 1 ? 'does' : 'do'} not exist`);
  return `${each.join('; ')} (--claude-home, --codex-home or --provider-home <id>=<path> name where a client keeps its sessions)`;
}

/** Whether no provider found any of its folders (and at least one said where it looked). */
export function noStoreExists(searched: readonly SearchedStore[]): boolean {
  return searched.length > 0 && searched.every((s) => !s.exists);
}
