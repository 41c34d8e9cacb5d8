/**
 * Turns what can go wrong while reading a file into the protocol's errors: a clear one-line message
 * with the path, never record content, and the code the host acts on.
 */
import { JsonlInputError, JsonlLimitError, namingFile } from '../../../sdk/jsonl.js';
import { invalidInput, limitExceeded, PluginError, sourceChanged } from '../../../sdk/serve.js';
import { ScanFatalError, SourceMovedError } from './scan.js';

function errnoCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? String((error as { code: unknown }).code) : undefined;
}

/** The PluginError for `error`, or the error itself when it is not an input problem. */
export function asPluginError(error: unknown, path: string): unknown {
  if (error instanceof PluginError) return error;
  if (error instanceof JsonlLimitError) return limitExceeded(namingFile(path, error.message));
  if (error instanceof JsonlInputError) return invalidInput(namingFile(path, error.message));
  if (error instanceof SourceMovedError) return sourceChanged(error.message);
  if (error instanceof ScanFatalError) {
    return error.state === 'oversized' ? limitExceeded(`${path}: ${error.message}`) : invalidInput(`${path}: ${error.message}`);
  }
  switch (errnoCode(error)) {
    case 'ENOENT':
      return invalidInput(`${path} does not exist`);
    case 'EISDIR':
      return invalidInput(`${path} is a directory, not a transcript`);
    case 'ELOOP':
      return invalidInput(`${path} is a symbolic link; give the transcript's own path`);
    case 'EACCES':
    case 'EPERM':
      return invalidInput(`${path} cannot be read (permission denied)`);
    default:
      return error;
  }
}

/** Runs `fn`, rethrowing input problems as protocol errors. */
export async function withInputErrors<T>(path: string, fn: () => Promise<T> | T): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    throw asPluginError(error, path);
  }
}
