import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { plainUsage, toEnvelope } from '../../../kernel/cli/base-command.js';

describe("oclif's parse errors in the CLI's own words", () => {
  it('names flags with their dashes and drops the preamble', () => {
    expect(plainUsage('The following errors occurred: Missing required flag context-tokens Missing required flag provider')).toBe(
      'missing required flag --context-tokens; missing required flag --provider',
    );
    expect(plainUsage('The following error occurred: --since=1h cannot also be provided when using --all')).toBe('--all and --since cannot be used together');
  });

  it('names two exclusive flags once, without the value oclif echoes', () => {
    // Flags exclusive of each other are refused from both sides (watch --all --max-age 5).
    expect(plainUsage('The following errors occurred: --all=true cannot also be provided when using --max-age; --max-age=5 cannot also be provided when using --all')).toBe(
      '--all and --max-age cannot be used together',
    );
    expect(plainUsage('--dry-run cannot also be provided when using --rehearse')).toBe('--dry-run and --rehearse cannot be used together');
  });

  it('says what a number flag needs', () => {
    expect(plainUsage('Parsing --limit Expected an integer but received: 1.5')).toBe('--limit must be a whole number, digits only (got 1.5)');
    // oclif echoes the value trimmed, which would make a refused " 5" look valid.
    expect(plainUsage('Parsing --limit Expected an integer but received: 5', ['recall', '--limit', ' 5'])).toBe('--limit must be a whole number, digits only (got " 5")');
    expect(plainUsage('Parsing --limit Expected an integer but received: 5', ['recall', '--limit=5 '])).toBe('--limit must be a whole number, digits only (got "5 ")');
    expect(toEnvelope(Object.assign(new Error('Parsing --record \n\tExpected an integer but received: \nSee more help with --help'), { oclif: { exit: 2 } })).error.message).toBe(
      '--record must be a whole number, digits only (got an empty value)',
    );
    // A bound says so in the same words.
    expect(plainUsage('Parsing --trigger Expected an integer greater than or equal to 1 but received: -1')).toBe('--trigger must be a whole number of at least 1 (got -1)');
    expect(plainUsage('Parsing --context-tokens Expected an integer less than or equal to 100000000 but received: 999999999999')).toBe(
      '--context-tokens must be a whole number of at most 100000000 (got 999999999999)',
    );
    // A value outside the choices says so in the same words, with the choice probably meant.
    expect(plainUsage('Parsing --format Expected --format=yaml to be one of: csv, json')).toBe('--format must be one of csv, json (got yaml)');
    expect(plainUsage('Expected --quota-pressure=hihg to be one of: low, normal, high')).toBe('--quota-pressure must be one of low, normal, high (got hihg; did you mean high?)');
    expect(plainUsage('Expected --provider= to be one of: claude_code, codex, devin, claude')).toBe('--provider must be one of claude_code, codex, devin, claude (got an empty value)');
    expect(plainUsage('All of the following must be provided when using --against: --manifest')).toBe('--against needs --manifest');
  });

  it('folds a missing argument whose description oclif wrapped into one parenthesis', () => {
    const error = Object.assign(new Error('Missing 1 required arg:\nsession  Session id, or vault:<sha256> of an\n         archived snapshot.\nSee more help with --help'), { oclif: { exit: 2 } });
    expect(toEnvelope(error).error.message).toBe('Missing 1 required arg: session (Session id, or vault:<sha256> of an archived snapshot.)');
  });

  it('keeps the problems of one parse error apart', () => {
    // The message oclif builds for an exclusive flag and a missing dependency at once.
    const error = Object.assign(
      new Error('The following errors occurred:\n  --against=y cannot also be provided when using --prepare-manifest\n  All of the following must be provided when using --against: --manifest\nSee more help with --help'),
      { oclif: { exit: 2 } },
    );
    expect(toEnvelope(error).error.message).toBe('--against and --prepare-manifest cannot be used together; --against needs --manifest');
  });

  it('is applied to usage errors only, folded to one line', () => {
    const error = Object.assign(new Error('The following error occurred:\nMissing required flag query\nSee more help with --help'), { oclif: { exit: 2 } });
    expect(toEnvelope(error)).toEqual({ ok: false, error: { code: 'usage', message: 'missing required flag --query' } });
  });
});

describe('file-system failures say what, where and what to do', () => {
  it('names the call, the path and the fix, keeping the errno as the code', () => {
    const full = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', syscall: 'write' });
    expect(toEnvelope(full)).toEqual({ ok: false, error: { code: 'enospc', message: 'write failed: the disk is full; free some space and run the command again (ENOSPC)' } });
    const dir = mkdtempSync(join(tmpdir(), 'gob-eacces-'));
    try {
      const present = join(dir, 'index.jsonl');
      writeFileSync(present, '');
      const denied = Object.assign(new Error(`EACCES: permission denied, open '${present}'`), { code: 'EACCES', syscall: 'open', path: present });
      expect(toEnvelope(denied).error.message).toBe(`open failed on ${present}: permission denied; check the permissions of that file and of every directory on the way to it (EACCES)`);
      // A file the open was to create is refused by its directory, which is the one to fix.
      const creating = join(dir, 'custody.lock');
      const refused = Object.assign(new Error(`EACCES: permission denied, open '${creating}'`), { code: 'EACCES', syscall: 'open', path: creating });
      expect(toEnvelope(refused).error.message).toBe(`open failed on ${creating}: permission denied; it does not exist yet, so check that you own ${dir} and can write to it (EACCES)`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    // A refusal to read is not answered with advice about writing, nor the other way round.
    const unreadable = Object.assign(new Error("EACCES: permission denied, scandir '/s'"), { code: 'EACCES', syscall: 'scandir', path: '/s' });
    expect(toEnvelope(unreadable).error.message).toBe('scandir failed on /s: permission denied; check that you can read it and enter every directory on the way to it (EACCES)');
    const unwritable = Object.assign(new Error("EACCES: permission denied, mkdir '/v/x'"), { code: 'EACCES', syscall: 'mkdir', path: '/v/x' });
    expect(toEnvelope(unwritable).error.message).toBe('mkdir failed on /v/x: permission denied; check that you own that directory and can write to it (EACCES)');
  });

  it('a link or rename refused names where it was going, whose directory is the one to fix', () => {
    const link = Object.assign(new Error("EACCES: permission denied, link '/d/staging/s.jsonl' -> '/p/app/f.jsonl'"), { code: 'EACCES', syscall: 'link', path: '/d/staging/s.jsonl', dest: '/p/app/f.jsonl' });
    expect(toEnvelope(link).error.message).toBe('link failed from /d/staging/s.jsonl to /p/app/f.jsonl: permission denied; check that you own /p/app and can write to it (EACCES)');
  });

  it('names the file standing where a directory belongs', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gob-enotdir-'));
    try {
      writeFileSync(join(dir, 'gobstopper'), 'x');
      const path = join(dir, 'gobstopper', 'vault', 'index.jsonl');
      const error = Object.assign(new Error(`ENOTDIR: not a directory, lstat '${path}'`), { code: 'ENOTDIR', syscall: 'lstat', path });
      expect(toEnvelope(error).error).toEqual({ code: 'enotdir', message: `lstat failed on ${path}: ${join(dir, 'gobstopper')} is a file where a directory is expected; move it aside (ENOTDIR)` });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('leaves other errors as they are', () => {
    expect(toEnvelope(Object.assign(new Error('ENOENT: no such file'), { code: 'ENOENT' })).error).toEqual({ code: 'enoent', message: 'ENOENT: no such file' });
  });
});
