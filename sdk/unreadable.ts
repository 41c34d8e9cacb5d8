/**
 * A transcript a provider found while listing sessions but could not read, told to the host in
 * the discover result (not only logged), so that a lookup that finds nothing can say why.
 */
import type { UnreadableTranscript } from '../schemas/generated/types.js';

/** As many as the schema takes; past them a lookup says "at least", and the first ones explain enough. */
export const MAX_UNREADABLE = 64;

const REASONS: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ELOOP: 'too many levels of symbolic links',
  EIO: 'input/output error',
  EISDIR: 'is a directory',
  ENOTDIR: 'a file stands where a directory belongs',
  EMFILE: 'too many open files',
};

/** A few words for why `error` stopped the read. */
export function unreadableReason(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (typeof code === 'string' && REASONS[code]) return REASONS[code];
  const message = error instanceof Error ? error.message : String(error);
  const line = message.split('\n')[0]!.trim() || 'unreadable';
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}

/** Adds `path` to `list` unless the list is full. */
export function noteUnreadable(list: UnreadableTranscript[], path: string, error: unknown): void {
  noteNotListed(list, path, unreadableReason(error));
}

/** Adds `path`, with why it is not listed, to `list` unless the list is full. */
export function noteNotListed(list: UnreadableTranscript[], path: string, reason: string): void {
  if (list.length < MAX_UNREADABLE) list.push({ path, reason });
}

/** The reason given for a transcript that is a symbolic link: sessions are the files a client wrote, never followed links. */
export const LINK_NOT_FOLLOWED = 'a symbolic link, not followed (name the file it points to)';

/** Adds a linked transcript to `list` unless the list is full. */
export function noteLinked(list: UnreadableTranscript[], path: string): void {
  noteNotListed(list, path, LINK_NOT_FOLLOWED);
}

/**
 * The reason given for a file in a client's session folder that holds none of its records (another
 * client's transcript, a file written by hand): listing it nowhere would leave the user wondering
 * where their session went. An empty file is no session and is passed over without a word.
 */
export function notATranscript(client: string): string {
  return `none of the lines read from its start and end is a ${client} record (gobstopper verify <path> says what the file is)`;
}
