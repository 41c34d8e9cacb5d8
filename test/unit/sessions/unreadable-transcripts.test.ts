import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { discoverSessions } from '../../../plugins/provider-claude-code/src/discover.js';
import { discover as discoverRollouts } from '../../../plugins/provider-codex/src/discover.js';
import { resolveSession } from '../../../kernel/sessions/selector.js';
import type { ProviderPort } from '../../../kernel/sessions/provider-port.js';
import { validateProviderDiscoverResult } from '../../../schemas/generated/validators.js';
import { DEMO_CLAUDE_ID, demoHome } from '../../helpers/demo-home.js';

// Tests run as root, whom a file's mode does not stop: the refusal is made at the open instead, and
// a directory that cannot be entered refuses the lstat of what is under it.
const locked = new Set<string>();
const lockedDirs = new Set<string>();
/** Folders that exist but whose listing is refused (mode 0300, say). */
const unlisted = new Set<string>();
vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const openSync = ((path: import('node:fs').PathLike, ...rest: unknown[]) => {
    if (locked.has(String(path))) throw Object.assign(new Error(`EACCES: permission denied, open '${String(path)}'`), { code: 'EACCES', syscall: 'open', path: String(path) });
    return (fs.openSync as (...a: unknown[]) => number)(path, ...rest);
  }) as typeof fs.openSync;
  const lstatSync = ((path: import('node:fs').PathLike, ...rest: unknown[]) => {
    if ([...lockedDirs].some((dir) => String(path).startsWith(`${dir}/`))) throw Object.assign(new Error(`EACCES: permission denied, lstat '${String(path)}'`), { code: 'EACCES', syscall: 'lstat', path: String(path) });
    return (fs.lstatSync as (...a: unknown[]) => unknown)(path, ...rest);
  }) as typeof fs.lstatSync;
  const readdirSync = ((path: import('node:fs').PathLike, ...rest: unknown[]) => {
    if (unlisted.has(String(path))) throw Object.assign(new Error(`EACCES: permission denied, scandir '${String(path)}'`), { code: 'EACCES', syscall: 'scandir', path: String(path) });
    return (fs.readdirSync as (...a: unknown[]) => unknown)(path, ...rest);
  }) as typeof fs.readdirSync;
  return { ...fs, openSync, lstatSync, readdirSync, default: { ...fs, openSync, lstatSync, readdirSync } };
});

let home: ReturnType<typeof demoHome> | undefined;
afterEach(() => {
  locked.clear();
  lockedDirs.clear();
  unlisted.clear();
  home?.cleanup();
});

describe('a transcript the provider cannot read is reported, not only skipped', () => {
  it('both providers list it with a reason, apart from the sessions they could read', () => {
    home = demoHome();
    locked.add(home.claudeSession);
    locked.add(home.codexSession);
    const claude = discoverSessions({ provider_id: 'claude_code', home: home.claudeHome });
    expect(claude).toMatchObject({ sessions: [], unreadable: [{ path: home.claudeSession, reason: 'permission denied' }] });
    expect(validateProviderDiscoverResult(claude)).toBe(true);
    const codex = discoverRollouts({ provider_id: 'codex', home: home.codexHome });
    expect(codex).toMatchObject({ sessions: [], unreadable: [{ path: home.codexSession, reason: 'permission denied' }] });
    locked.clear();
    expect(discoverSessions({ provider_id: 'claude_code', home: home.claudeHome })).not.toHaveProperty('unreadable');
  });

  it('a folder of the store that cannot be listed is named by both providers, and a lookup says so', async () => {
    home = demoHome();
    unlisted.add(home.claudeDir);
    unlisted.add(home.codexDir);
    const claude = discoverSessions({ provider_id: 'claude_code', home: home.claudeHome });
    expect(validateProviderDiscoverResult(claude)).toBe(true);
    expect(claude).toMatchObject({ sessions: [], unreadable: [{ path: `${home.claudeDir}/`, reason: 'folder not searched: permission denied' }] });
    const codex = discoverRollouts({ provider_id: 'codex', home: home.codexHome });
    expect(codex).toMatchObject({ sessions: [], unreadable: [{ path: `${home.codexDir}/`, reason: 'folder not searched: permission denied' }] });
    const provider: ProviderPort = { id: 'claude_code', discover: async (p) => discoverSessions({ provider_id: 'claude_code', ...p }), identify: async () => ({ matches: false, session: null }) };
    await expect(resolveSession(DEMO_CLAUDE_ID.slice(0, 8), [provider], { claude_code: home.claudeHome })).rejects.toMatchObject({
      code: 'session_not_found',
      message: `no session matching '${DEMO_CLAUDE_ID.slice(0, 8)}'; 1 folder could not be read (${home.claudeDir}/: folder not searched: permission denied)`,
    });
    // A client home that is not there yet is no problem to report.
    expect(discoverSessions({ provider_id: 'claude_code', home: join(home.root, 'none') })).not.toHaveProperty('unreadable');
  });

  it('a path under a directory that cannot be entered is named as unreachable, not as missing', async () => {
    home = demoHome();
    lockedDirs.add(home.claudeDir);
    await expect(resolveSession(home.claudeSession, [])).rejects.toMatchObject({
      code: 'session_unreadable',
      message: `cannot reach ${home.claudeSession}: permission denied on a directory on the way; check that you can enter every directory up to it (EACCES)`,
    });
    lockedDirs.clear();
    await expect(resolveSession(`${home.claudeDir}/gone.jsonl`, [])).rejects.toMatchObject({ code: 'session_not_found' });
  });

  it('a lookup that finds nothing says which files it could not read', async () => {
    const unreadable = [{ path: '/h/.claude/projects/p/7d3f.jsonl', reason: 'permission denied' }];
    const provider: ProviderPort = {
      id: 'claude_code',
      discover: async () => ({ sessions: [], unreadable }),
      identify: async () => ({ matches: false, session: null }),
    };
    await expect(resolveSession(DEMO_CLAUDE_ID.slice(0, 4), [provider])).rejects.toMatchObject({
      code: 'session_not_found',
      message: "no session matching '7d3f'; 1 transcript file could not be read (/h/.claude/projects/p/7d3f.jsonl: permission denied)",
      details: { unreadable },
    });
    // A provider that listed as many as the protocol takes may have left some out.
    const many = Array.from({ length: 64 }, (_, i) => ({ path: `/h/${i}.jsonl`, reason: 'permission denied' }));
    const full: ProviderPort = { ...provider, discover: async () => ({ sessions: [], unreadable: many }) };
    await expect(resolveSession('7d3f', [full])).rejects.toMatchObject({ message: expect.stringContaining('; at least 64 transcript files could not be read (/h/0.jsonl: permission denied, /h/1.jsonl: permission denied, …)') });
  });
});
