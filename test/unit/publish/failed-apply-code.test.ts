import { describe, expect, it } from 'vitest';
import { GobstopperError } from '../../../kernel/errors.js';
import { failedApplyCode } from '../../../kernel/publish/failed-apply-code.js';

describe('the events-log code of a failed apply', () => {
  it('tells a fork that failed its check, the disk or the vault, and anything else apart', () => {
    expect(failedApplyCode(new GobstopperError('verification_failed', 'new findings'))).toBe('verification_failed');
    // Node's own error, and the lowercased errno the commands give it.
    expect(failedApplyCode(Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' }))).toBe('io');
    expect(failedApplyCode(new GobstopperError('efbig', 'write failed on x: the file would grow past …'))).toBe('io');
    expect(failedApplyCode(new GobstopperError('vault_full', 'the vault index is at its cap'))).toBe('io');
    expect(failedApplyCode(new GobstopperError('plugin_error', 'answered provider/render with error -32603'))).toBe('apply_failed');
    expect(failedApplyCode(new Error('boom'))).toBe('apply_failed');
    expect(failedApplyCode(undefined)).toBe('apply_failed');
  });
});
