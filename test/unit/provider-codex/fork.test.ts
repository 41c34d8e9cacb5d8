import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { forkTarget } from '../../../plugins/provider-codex/src/fork.js';
import { parse } from '../../../plugins/provider-codex/src/parse.js';
import { render } from '../../../plugins/provider-codex/src/render.js';
import { parseRolloutName, rolloutTimestamp } from '../../../plugins/provider-codex/src/rollout-name.js';
import { sanitizeLabel } from '../../../plugins/provider-codex/src/text.js';
import { firstLine } from '../../../sdk/summary-lines.js';
import { clipUtf8 } from '../../../sdk/utf8.js';
import { verify } from '../../../plugins/provider-codex/src/verify.js';
import { validateProviderForkTargetResult } from '../../../schemas/generated/validators.js';
import { sessionsDir } from '../../fixtures/codex/rollout-builder.js';
import { paginatedSession } from '../../fixtures/codex/sessions.js';
import { makeTempHome, type TempHome } from '../../helpers/temp-home.js';

let home: TempHome;
beforeEach(() => {
  home = makeTempHome('codex-fork-');
});
afterEach(() => home.cleanup());

const NEW_ID = '019e5555-6666-7777-8888-999900001111';
const NOW = '2026-03-02T08:09:10.000Z';

describe('provider-codex fork_target', () => {
  it("puts the fork beside its source, named with the source's timestamp and the new id", () => {
    const { builder } = paginatedSession();
    const source = builder.writeTo(sessionsDir(home.codexHome));
    const result = forkTarget({ provider_id: 'codex', path: source, session_id: builder.id, new_session_id: NEW_ID, now: NOW });
    expect(validateProviderForkTargetResult(result)).toBe(true);
    expect(dirname(result.target_path)).toBe(dirname(source));
    const stamp = parseRolloutName(source)!.timestamp;
    expect(stamp).not.toBe(rolloutTimestamp(new Date(NOW)));
    expect(result.target_path).toBe(join(dirname(source), `rollout-${stamp}-${NEW_ID}.jsonl`));
    expect(parseRolloutName(result.target_path)).toEqual({ timestamp: stamp, id: NEW_ID });
    expect(result.resume_command).toEqual(['codex', 'resume', NEW_ID]);
    // The recorded directory does not exist here: no `cd` that would fail, and a note saying why.
    expect(result.resume_cwd).toBeNull();
    expect(result.resume_note).toContain("the session's directory /work/project no longer exists");
  });

  it('runs the resumed session in its directory when that exists, and says when the rollout is outside any Codex home', () => {
    const { builder } = paginatedSession();
    const source = builder.writeTo(sessionsDir(home.codexHome));
    const here = forkTarget({ provider_id: 'codex', path: source, session_id: builder.id, new_session_id: NEW_ID, cwd: home.root, now: NOW });
    expect(here.resume_cwd).toBe(home.root);
    expect(here.resume_note).toBeUndefined();
    const loose = join(home.root, 'loose');
    mkdirSync(loose);
    const outside = builder.writeTo(loose);
    const note = forkTarget({ provider_id: 'codex', path: outside, session_id: builder.id, new_session_id: NEW_ID, cwd: home.root, now: NOW }).resume_note;
    expect(note).toContain('not under a Codex home');
  });

  it('names a fork of a file the client did not name by the time it is made', () => {
    const { builder } = paginatedSession();
    const named = builder.writeTo(sessionsDir(home.codexHome));
    const plain = join(dirname(named), 'my-session.jsonl');
    renameSync(named, plain);
    const result = forkTarget({ provider_id: 'codex', path: plain, session_id: builder.id, new_session_id: NEW_ID, now: NOW });
    expect(result.target_path).toBe(join(dirname(plain), `rollout-${rolloutTimestamp(new Date(NOW))}-${NEW_ID}.jsonl`));
  });

  it('refuses ids that are not safe in a file name and times that do not parse', () => {
    const source = paginatedSession().builder.writeTo(sessionsDir(home.codexHome));
    expect(() => forkTarget({ provider_id: 'codex', path: source, session_id: 's', new_session_id: 'a/b', now: NOW })).toThrow(/new_session_id/);
    expect(() => forkTarget({ provider_id: 'codex', path: source, session_id: 's', new_session_id: NEW_ID, now: 'yesterday' })).toThrow(/ISO-8601/);
  });

  it('a fork rendered with the new id verifies clean, and its file-name id equals its session_meta id', async () => {
    const { builder } = paginatedSession();
    const source = builder.writeTo(sessionsDir(home.codexHome));
    const target = forkTarget({ provider_id: 'codex', path: source, session_id: builder.id, new_session_id: NEW_ID, now: NOW }).target_path;
    const staging = join(dirname(source), '.staging');
    writeFileSync(staging, '');
    const text = readFileSync(source);
    await render({ provider_id: 'codex', path: source, source_sha256: createHash('sha256').update(text).digest('hex'), edits: [], staging_path: staging, new_session_id: NEW_ID, now: NOW });
    renameSync(staging, target);
    expect((await verify({ provider_id: 'codex', path: target })).findings).toEqual([]);
    const t = await parse({ provider_id: 'codex', path: target });
    expect(t.session.session_id).toBe(NEW_ID);
    expect(parseRolloutName(target)?.id).toBe(NEW_ID);
    expect((await verify({ provider_id: 'codex', path: source })).findings).toEqual([]);
  });
});

describe('provider-codex names and text helpers', () => {
  it('formats file-name timestamps in local time to the second', () => {
    const at = new Date(2026, 1, 3, 4, 5, 6);
    expect(rolloutTimestamp(at)).toBe('2026-02-03T04-05-06');
  });

  it('reads the id out of client file names only: a prefixed copy is a name the client cannot find', () => {
    expect(parseRolloutName('/x/rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl')).toEqual({ timestamp: '2026-02-23T12-54-34', id: '019c8a59-e9dd-71f0-9ae3-4079fe9726a9' });
    expect(parseRolloutName('/x/owner__repo__rollout-2026-02-23T12-54-34-abc.jsonl')).toBeNull();
    expect(parseRolloutName('/x/session.jsonl')).toBeNull();
  });

  it('never cuts inside a character and keeps labels free of payload text', () => {
    expect(clipUtf8('aé', 2)).toBe('a');
    expect(clipUtf8('😀😀', 5)).toBe('😀');
    expect(firstLine('\n\n  first\nsecond', 256)).toBe('first');
    expect(firstLine('tab\there', 256)).toBe('tab here');
    expect(firstLine(' \n\t\n', 256)).toBeNull();
    expect(sanitizeLabel('rm -rf / && curl evil', 'tool')).toBe('rm_-rf_/____curl_evil');
    expect(sanitizeLabel('!!!', 'tool')).toBe('tool');
  });
});
