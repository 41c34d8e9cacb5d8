import { existsSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { GobstopperError } from '../../../kernel/errors.js';
import { PrivateWorkspace } from '../../../kernel/services/private-workspace.js';

describe('private workspace', () => {
  let ws: PrivateWorkspace | null = null;
  afterEach(async () => {
    await ws?.dispose();
    ws = null;
  });

  it('says what a provider said about a private copy or staging file about the session it stands for', async () => {
    ws = await PrivateWorkspace.create();
    const copy = await ws.writeCopy('s.jsonl', Buffer.from('{}\n'), undefined, '/home/u/.codex/sessions/s.jsonl');
    const staging = await ws.stagingFile('s.jsonl', 'the rewritten copy of /home/u/.codex/sessions/s.jsonl');
    const said = new GobstopperError('transcript_too_large', `${staging} has more than 60 records; ${copy} has 60`, { details: { limit: 60 } });
    const told = ws.aboutOriginals(said) as GobstopperError;
    expect(told.message).toBe('the rewritten copy of /home/u/.codex/sessions/s.jsonl has more than 60 records; /home/u/.codex/sessions/s.jsonl has 60');
    expect(told).toMatchObject({ code: 'transcript_too_large', details: { limit: 60 } });
    // Nothing to translate: the same error, and what is not a GobstopperError passes through.
    const other = new GobstopperError('x', 'about something else');
    expect(ws.aboutOriginals(other)).toBe(other);
    const plain = new Error(staging);
    expect(ws.aboutOriginals(plain)).toBe(plain);
  });

  it('removes every private file when disposed', async () => {
    ws = await PrivateWorkspace.create();
    const copy = await ws.writeCopy('s.jsonl', Buffer.from('{}\n'));
    await ws.dispose();
    expect(existsSync(copy)).toBe(false);
    ws = null;
  });
});
