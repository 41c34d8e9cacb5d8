import { Command } from '@oclif/core';
import { GobstopperError } from '../errors.js';

export interface ErrorEnvelope {
  ok: false;
  error: { code: string; message: string; details?: Record<string, unknown> };
}

interface OclifLikeError extends Error {
  code?: string;
  oclif?: { exit?: number };
  exitCode?: number;
}

/**
 * Every command extends this: `--json` everywhere, errors as one JSON object or one line, exit codes
 * 0 ok / 1 error / 2 usage, and no stack trace for anything expected.
 */
export abstract class BaseCommand<TResult> extends Command {
  static override enableJsonFlag = true;

  abstract override run(): Promise<TResult>;

  /** Human output; suppressed under --json, where the returned result is printed instead. */
  protected say(line = ''): void {
    this.log(line);
  }

  /** Progress and notes for people go to stderr so stdout stays parseable. */
  protected note(line: string): void {
    if (!this.jsonEnabled()) process.stderr.write(line + '\n');
  }

  protected override async catch(error: OclifLikeError): Promise<void> {
    const envelope = toEnvelope(error);
    const exit = exitStatus(error);
    process.exitCode = exit;
    if (this.jsonEnabled()) {
      process.stdout.write(JSON.stringify(envelope) + '\n');
      return;
    }
    process.stderr.write(`gobstopper: ${envelope.error.message}\n`);
    if (process.env.GOBSTOPPER_DEBUG && error.stack) process.stderr.write(error.stack + '\n');
  }
}

function exitStatus(error: OclifLikeError): number {
  if (error instanceof GobstopperError) return error.exit;
  const oclifExit = error.oclif?.exit;
  if (typeof oclifExit === 'number') return oclifExit === 0 ? 0 : oclifExit === 2 ? 2 : 1;
  return 1;
}

export function toEnvelope(error: OclifLikeError): ErrorEnvelope {
  if (error instanceof GobstopperError) {
    return { ok: false, error: { code: error.code, message: oneLine(error.message), ...(error.details ? { details: error.details } : {}) } };
  }
  if (error.oclif?.exit === 2) return { ok: false, error: { code: 'usage', message: oneLine(error.message) } };
  const code = typeof error.code === 'string' && /^[A-Z_a-z0-9]+$/.test(error.code) ? error.code.toLowerCase() : 'internal';
  return { ok: false, error: { code, message: oneLine(error.message || String(error)) } };
}

function oneLine(message: string): string {
  // oclif decorates parse errors with help hints over several lines; keep the first meaningful line.
  const first = message.split('\n').map((l) => l.trim()).find((l) => l.length > 0) ?? 'unknown error';
  return first.replace(/\u001b\[[0-9;]*m/g, '');
}
