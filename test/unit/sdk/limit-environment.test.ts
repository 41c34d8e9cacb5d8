import { describe, expect, it } from 'vitest';
import { Runtime } from '../../../kernel/services/runtime.js';
import { toEnvelope } from '../../../kernel/cli/base-command.js';

describe('limit variables are checked by the host before any plugin reads them', () => {
  it.each([
    ['GOBSTOPPER_MAX_RECORDS', 'abc', 'GOBSTOPPER_MAX_RECORDS must be a whole number of records, got "abc"'],
    ['GOBSTOPPER_MAX_RECORDS', '0', 'GOBSTOPPER_MAX_RECORDS must be between 1 and 100000, got 0'],
    ['GOBSTOPPER_MAX_TRANSCRIPT_BYTES', '-1', 'GOBSTOPPER_MAX_TRANSCRIPT_BYTES must be a whole number of bytes, got "-1"'],
    ['GOBSTOPPER_MAX_RECORD_BYTES', '12', 'GOBSTOPPER_MAX_RECORD_BYTES must be between 1024 and 8589934592, got 12'],
    ['GOBSTOPPER_MAX_TRANSCRIPT_BYTES', '99999999999999999999', 'GOBSTOPPER_MAX_TRANSCRIPT_BYTES must be between 1024 and 8589934592, got 99999999999999999999'],
    ['GOBSTOPPER_MAX_RECORDS', '000', 'GOBSTOPPER_MAX_RECORDS must be between 1 and 100000, got 000'],
  ])('%s=%s is the environment\'s error, not a plugin\'s', (name, value, message) => {
    let thrown: unknown;
    try {
      new Runtime({ env: { ...process.env, [name]: value } });
    } catch (error) {
      thrown = error;
    }
    expect(toEnvelope(thrown as Error)).toEqual({ ok: false, error: { code: 'invalid_environment', message } });
  });

  it('takes values in range, and unset or empty ones as the defaults', () => {
    expect(() => new Runtime({ env: { ...process.env, GOBSTOPPER_MAX_RECORDS: '500', GOBSTOPPER_MAX_RECORD_BYTES: '' } })).not.toThrow();
  });
});
