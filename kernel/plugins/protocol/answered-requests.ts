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
 * What is wrong with a response addressed to a request, or null. The `error` member must be a
 * JSON-RPC 2.0 error object, an integer `code` and a string `message`: the connection library reads
 * any other code as its UnknownErrorCode, -32001, which is this protocol's "source changed", so a
 * provider answering `{"error":{"message":"crash"}}` would otherwise be taken at its word that the
 * session changed while it was read. And a response is a result or an error, never both: the
 * library would quietly pick the error.
 */
function responseProblem(message: Message): string | null {
  if (!('error' in message)) return null;
  const error = (message as { error?: unknown }).error;
  if (error === null || error === undefined) return null; // neither a result nor an error: the channel names that
  if (typeof error !== 'object' || Array.isArray(error)) return NOT_AN_ERROR_OBJECT;
  const { code, message: text } = error as { code?: unknown; message?: unknown };
  if (!Number.isInteger(code) || typeof text !== 'string') return NOT_AN_ERROR_OBJECT;
  if ('result' in message) return 'a response that has both a result and an error';
  return null;
}

const NOT_AN_ERROR_OBJECT = 'an error that is not a JSON-RPC error object (it needs an integer code and a string message)';

/**
 * What a response with `"id": null` said, in one line. JSON-RPC sends one when the request could
 * not be read at all; the connection library only logs it, and the call it was about would wait
 * out its whole deadline.
 */
function unaddressedAnswer(message: Message): string {
  const error = (message as { error?: unknown }).error;
  if (error !== null && typeof error === 'object' && !Array.isArray(error)) {
    const { code, message: text } = error as { code?: unknown; message?: unknown };
    if (Number.isInteger(code) && typeof text === 'string') return `error ${code as number}: ${text}`;
  }
  return 'a response that names no request (id null) and is not a JSON-RPC error';
}

/** What the channel is told about answers it must not pass on to the connection. */
export interface AnswerWatch {
  /** An answer to a request never sent, or one already answered. */
  onStray(id: Id): void;
  /** An answer to an open request that is not a well-formed response; `problem` says how. */
  onMalformed(id: Id, problem: string): void;
  /** An answer with `"id": null`: the plugin could not read a request. `said` is its error in one line. */
  onUnaddressed(said: string): void;
}

/**
 * The reader and writer to hand the connection: the same streams, with every response checked
 * against the requests written and not yet answered. Answers that are stray, malformed or
 * addressed to no request go to `watch` and are not passed on.
 */
export function watchAnswers(reader: MessageReader, writer: MessageWriter, watch: AnswerWatch): { reader: MessageReader; writer: MessageWriter } {
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
        if (!isResponse(message)) return callback(message);
        if (message.id === null) return watch.onUnaddressed(unaddressedAnswer(message));
        if (!open.delete(message.id)) return watch.onStray(message.id);
        const problem = responseProblem(message);
        if (problem !== null) return watch.onMalformed(message.id, problem);
        callback(message);
      }),
    dispose: () => reader.dispose(),
  };
  return { reader: watchedReader, writer: watchedWriter };
}
