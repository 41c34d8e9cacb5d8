/**
 * The state card in Claude's own shape: a user prompt record chained to the live leaf, with the
 * envelope the client writes on its own prompts, followed by a last-prompt record naming it so the
 * client resumes onto the card's branch (realclients.md §1.3, §1.4 digest row).
 */
import { randomUUID } from 'node:crypto';
import type { RawRecord } from './records.js';

/** Envelope fields copied from the leaf, in the order the client writes them. */
const LEAF_ENVELOPE = ['userType', 'cwd', 'sessionId', 'version', 'gitBranch', 'slug', 'entrypoint'] as const;
/** Fields that belong to a prompt rather than to the session; copied from the last real prompt. */
const PROMPT_ENVELOPE = ['permissionMode', 'promptSource'] as const;

export interface CardInputs {
  text: string;
  /** uuid of the live leaf, or null when the file has no linked record. */
  parentUuid: string | null;
  /** The leaf record (session envelope). */
  leaf: RawRecord | null;
  /** The last user prompt on the live branch (prompt envelope). */
  prompt: RawRecord | null;
  /** sessionId for the appended records: the fork's id when forking. */
  sessionId: string | null;
  now: string;
  /** Refuses uuids already in the file. */
  isTaken: (uuid: string) => boolean;
}

function freshUuid(isTaken: (uuid: string) => boolean): string {
  for (;;) {
    const id = randomUUID();
    if (!isTaken(id)) return id;
  }
}

export function cardRecords(inputs: CardInputs): { card: RawRecord; lastPrompt: RawRecord } {
  const leaf = inputs.leaf ?? {};
  const prompt = inputs.prompt ?? leaf;
  const uuid = freshUuid(inputs.isTaken);
  const card: RawRecord = { parentUuid: inputs.parentUuid, isSidechain: false };
  for (const key of LEAF_ENVELOPE) if (key in leaf) card[key] = leaf[key];
  if (inputs.sessionId !== null) card.sessionId = inputs.sessionId;
  card.type = 'user';
  card.message = { role: 'user', content: inputs.text };
  card.uuid = uuid;
  card.timestamp = inputs.now;
  for (const key of PROMPT_ENVELOPE) if (key in prompt) card[key] = prompt[key];
  // A prompt id groups the records of one prompt; the card is a prompt of its own.
  if ('promptId' in prompt) card.promptId = freshUuid(inputs.isTaken);
  const lastPrompt: RawRecord = { type: 'last-prompt', lastPrompt: inputs.text, leafUuid: uuid };
  if (card.sessionId !== undefined) lastPrompt.sessionId = card.sessionId;
  return { card, lastPrompt };
}
