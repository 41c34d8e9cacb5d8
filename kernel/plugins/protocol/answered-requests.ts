/**
 * JSON-RPC answers are matched to requests by id, and the connection library quietly drops an
 * answer whose id it never sent (or sent and already had answered): the call it was meant for then
 * waits out its whole deadline. Watching the ids on the wire turns such an answer into what it is, a
 * protocol violation, the moment it arrives.
 */
import type { Disposable, Message, MessageReader, MessageWriter } from 'vscode-jsonrpc/node';

type Id = string | number;

function isRequest(message: Message): message is Message & { id: Id; method: string } {
  const m = message as { id?: unknown; method?: unknown };
  return typeof m.method === 'string' && (typeof m.id === 'string' || typeof m.id === 'number');
}

function isResponse(message: Message): message is Message & { id: Id | null } {
  const m = message as { method?: unknown };
  return m.method === undefined && 'id' in message && ('result' in message || 'error' in message);
}

/**
 * Whether a response's `error` member is a JSON-RPC 2.0 error object: an integer `code` and a string
 * `message`. The connection library reads any other code as its UnknownErrorCode, -32001, which is
 * this protocol's "source changed": a provider answering `{"error":{"message":"crash"}}` would
 * otherwise be taken at its word that the session changed while it was read.
 */
function hasMalformedError(message: Message): boolean {
  if (!('error' in message)) return false;
  const error = (message as { error?: unknown }).error;
  if (error === null || error === undefined) return false; // neither a result nor an error: the channel names that
  if (typeof error !== 'object' || Array.isArray(error)) return true;
  const { code, message: text } = error as { code?: unknown; message?: unknown };
  return !Number.isInteger(code) || typeof text !== 'string';
}

/**
 * The reader and writer to hand the connection: the same streams, with every response checked
 * against the requests written and not yet answered. `onStray` gets the id of any other answer, and
 * `onMalformedError` the id of an answer whose error is not a JSON-RPC error object; neither is
 * passed on.
 */
export function watchAnswers(
  reader: MessageReader,
  writer: MessageWriter,
  onStray: (id: Id) => void,
  onMalformedError: (id: Id) => void,
): { reader: MessageReader; writer: MessageWriter } {
  const open = new Set<Id>();
  const watchedWriter: MessageWriter = {
    get onError() {
      return writer.onError;
    },
    get onClose() {
      return writer.onClose;
    },
    write: (message: Message) => {
      if (isRequest(message)) open.add(message.id);
      return writer.write(message);
    },
    end: () => writer.end(),
    dispose: () => writer.dispose(),
  };
  const watchedReader: MessageReader = {
    get onError() {
      return reader.onError;
    },
    get onClose() {
      return reader.onClose;
    },
    get onPartialMessage() {
      return reader.onPartialMessage;
    },
    listen: (callback: (message: Message) => void): Disposable =>
      reader.listen((message) => {
        if (isResponse(message) && message.id !== null && !open.delete(message.id)) {
          onStray(message.id);
          return;
        }
        if (isResponse(message) && message.id !== null && hasMalformedError(message)) {
          onMalformedError(message.id);
          return;
        }
        callback(message);
      }),
    dispose: () => reader.dispose(),
  };
  return { reader: watchedReader, writer: watchedWriter };
}
