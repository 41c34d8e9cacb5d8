import { describe, expect, it } from 'vitest';
import { discoverAll, resolveSession } from '../../../kernel/sessions/selector.js';
import type { ProviderPort } from '../../../kernel/sessions/provider-port.js';

const session = (path: string) => ({ session: { provider: 'claude_code', session_id: '7d3f1c2a-8b4e-4f6a-9c1d-2e5b7a9c0d11', path, kind: 'session' as const }, usage: null, bytes_read: 0 });

describe('a provider that lists one file twice', () => {
  it('has one session there: listed once, and found by its id', async () => {
    const provider: ProviderPort = {
      id: 'claude_code',
      discover: async () => ({ sessions: [session('/h/a.jsonl'), session('/h/a.jsonl')] }),
      identify: async () => ({ matches: false, session: null }),
    };
    expect((await discoverAll([provider], {})).sessions).toHaveLength(1);
    expect((await resolveSession('7d3f', [provider])).session.path).toBe('/h/a.jsonl');
  });

  it('the same id in two files is still two sessions, and ambiguous', async () => {
    const provider: ProviderPort = {
      id: 'claude_code',
      discover: async () => ({ sessions: [session('/h/a.jsonl'), session('/h/copy/a.jsonl')] }),
      identify: async () => ({ matches: false, session: null }),
    };
    await expect(resolveSession('7d3f', [provider])).rejects.toMatchObject({ code: 'ambiguous_session', message: expect.stringContaining('name it by its path') });
  });
});
