import { describe, expect, it } from 'vitest';
import { missingStores, missingStoresNote, noStoreExists } from '../../../kernel/sessions/missing-stores.js';

describe('missing stores', () => {
  it('names a provider only when none of its folders exists', () => {
    const searched = [
      { provider: 'codex', path: '/c/sessions', exists: true },
      { provider: 'codex', path: '/c/archived_sessions', exists: false },
      { provider: 'claude_code', path: '/x/projects', exists: false },
    ];
    expect(missingStores(searched)).toEqual([{ provider: 'claude_code', paths: ['/x/projects'] }]);
    expect(missingStoresNote(searched)).toMatch(/^claude_code looked in \/x\/projects, which does not exist \(--claude-home/);
    expect(noStoreExists(searched)).toBe(false);
  });

  it('says nothing when every provider found a folder, or none said where it looked', () => {
    expect(missingStoresNote([{ provider: 'claude_code', path: '/x/projects', exists: true }])).toBeNull();
    expect(missingStoresNote([])).toBeNull();
    expect(noStoreExists([])).toBe(false);
  });

  it('lists every folder of a provider that found none', () => {
    const searched = [
      { provider: 'codex', path: '/c/sessions', exists: false },
      { provider: 'codex', path: '/c/archived_sessions', exists: false },
    ];
    expect(missingStoresNote(searched)).toContain('codex looked in /c/sessions and /c/archived_sessions, which do not exist');
    expect(noStoreExists(searched)).toBe(true);
  });
});
