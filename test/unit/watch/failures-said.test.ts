import { describe, expect, it } from 'vitest';
import type { WatchDecision } from '../../../schemas/generated/types.js';
import { FailuresSaid } from '../../../kernel/watch/failures-said.js';

const failed = (path: string, code: string): WatchDecision => ({ provider: 'codex', session_id: 's', path, context_tokens: 1, outcome: 'failed', error: { code, message: `${code} at ${path}` } });

describe('failures a watch says', () => {
  it('says a session failing the same way pass after pass once, and again once its failure changed or stopped', () => {
    const said = new FailuresSaid();
    const first = [failed('/a', 'enospc'), failed('/b', 'vault_insecure')];
    expect(said.repeated(first).size).toBe(0);
    const again = [failed('/a', 'enospc'), failed('/b', 'vault_insecure')];
    expect([...said.repeated(again)]).toEqual(again);
    // /a fails otherwise now; /b passes a pass without failing.
    const changed = failed('/a', 'efbig');
    expect(said.repeated([changed]).size).toBe(0);
    expect(said.repeated([failed('/b', 'vault_insecure')]).size).toBe(0);
  });

  it('says a failed pass once while the failure lasts, and tells when a pass runs again', () => {
    const said = new FailuresSaid();
    expect(said.passRan()).toBe(false);
    expect(said.passFailed('invalid_config\u0000line 1')).toBe(true);
    expect(said.passFailed('invalid_config\u0000line 1')).toBe(false);
    expect(said.passFailed('invalid_config\u0000line 2')).toBe(true);
    expect(said.passRan()).toBe(true);
    expect(said.passRan()).toBe(false);
    expect(said.passFailed('invalid_config\u0000line 2')).toBe(true);
  });
});
