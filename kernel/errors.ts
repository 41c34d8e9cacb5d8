/**
 * Expected failures carry a stable code and an exit status; the CLI prints them as one line (or
 * one JSON object with --json) and never a stack trace.
 */
export type ExitStatus = 1 | 2;

export class GobstopperError extends Error {
  readonly code: string;
  readonly exit: ExitStatus;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: string, message: string, options: { exit?: ExitStatus; details?: Record<string, unknown>; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'GobstopperError';
    this.code = code;
    this.exit = options.exit ?? 1;
    this.details = options.details;
  }
}

/**
 * A usage error: bad flags, bad arguments, an unknown id. Exit 2. Only for what the command line
 * gets wrong on its face; what the data answers (a record past the end, a snapshot of another
 * session) is an error, exit 1, however it was asked for.
 */
export function usageError(code: string, message: string, details?: Record<string, unknown>): GobstopperError {
  return new GobstopperError(code, message, { exit: 2, details });
}

export function isGobstopperError(error: unknown): error is GobstopperError {
  return error instanceof GobstopperError;
}
