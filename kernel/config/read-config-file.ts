/**
 * Reads one configuration file under the rules every config file follows: a regular file, not a
 * symlink, at most 64 KiB, UTF-8, TOML. Returns plain JSON-shaped data ready for schema validation.
 */
import { closeSync, constants, fstatSync, lstatSync, openSync, readSync } from 'node:fs';
import { parse as parseToml, TomlError } from 'smol-toml';
import { GobstopperError } from '../errors.js';
import { filesystemAdvice } from '../filesystem-message.js';
import { MAX_CONFIG_BYTES } from './paths.js';
import { MAX_NESTING, toPlainData, type PlainDataMarks } from './plain-data.js';
import { describeAt, placeAt } from './schema-messages.js';
import { describeRedefinition } from './toml-redefinition.js';

/** A file's data, and where it wrote floats: numbers the schema cannot tell from integers. */
export interface ParsedConfig {
  data: Record<string, unknown>;
  /** JSON pointers of the values written as floats (`8.0`, `2.5e5`). */
  floats: ReadonlySet<string>;
  /** JSON pointers of the dates and times, now their ISO text (`1979-05-27`). */
  dates: ReadonlySet<string>;
}

export type ConfigReadResult = { status: 'missing' } | ({ status: 'loaded' } & ParsedConfig);

const invalid = (message: string, details?: Record<string, unknown>) => new GobstopperError('invalid_config', message, { details });

/**
 * The path names nothing that can be read as a config file (a directory, a symlink, a file that will
 * not open), as opposed to a file whose content is wrong. Given with --config, that is the command
 * line's mistake (exit 2).
 */
export class UnusableConfigPath extends GobstopperError {
  constructor(message: string) {
    super('invalid_config', message);
  }
}

export function readConfigFile(path: string): ConfigReadResult {
  const text = readConfigText(path);
  if (text === null) return { status: 'missing' };
  return { status: 'loaded', ...parseConfigToml(text, path) };
}

/** null when the file does not exist; every other problem is an error naming the file. */
export function readConfigText(path: string): string | null {
  let linkStat;
  try {
    linkStat = lstatSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new UnusableConfigPath(`cannot read config ${path}: ${errnoText(error)}`);
  }
  if (linkStat.isSymbolicLink()) throw new UnusableConfigPath(`config ${path} is a symlink, and config is never read through one; replace the link with a regular file (or, for the user config, pass the real file with --config)`);
  if (!linkStat.isFile()) throw new UnusableConfigPath(`config ${path} is ${linkStat.isDirectory() ? 'a directory' : 'not a regular file'}`);
  // O_NOFOLLOW closes the gap between the lstat and the open; O_NONBLOCK keeps a swapped-in FIFO from hanging us.
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    throw new UnusableConfigPath(`cannot open config ${path}: ${errnoText(error)}`);
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw invalid(`config ${path} is not a regular file`);
    if (stat.size > MAX_CONFIG_BYTES) throw invalid(`config ${path} is ${stat.size} bytes; the limit is ${MAX_CONFIG_BYTES}`);
    const buffer = Buffer.alloc(MAX_CONFIG_BYTES + 1);
    let length = 0;
    for (;;) {
      let n: number;
      try {
        n = readSync(fd, buffer, length, buffer.length - length, null);
      } catch (error) {
        // EIO, EAGAIN (a FIFO swapped in after the check) and the like: name the file, not just the code.
        throw invalid(`cannot read config ${path}: ${errnoText(error)}`);
      }
      if (n === 0) break;
      length += n;
      if (length > MAX_CONFIG_BYTES) throw invalid(`config ${path} grew past ${MAX_CONFIG_BYTES} bytes while being read`);
    }
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(buffer.subarray(0, length));
    } catch {
      throw invalid(`config ${path} is not valid UTF-8`);
    }
  } finally {
    closeSync(fd);
  }
}

export function parseConfigToml(text: string, path: string): ParsedConfig {
  let parsed: unknown;
  try {
    parsed = parseToml(text, { integersAsBigInt: true });
  } catch (error) {
    if (error instanceof TomlError) {
      const what = firstLine(error.message).replace(/^Invalid TOML document:\s*/, '');
      const redefined = /^trying to redefine/.test(what) ? describeRedefinition(text, error.line, error.column) : null;
      if (redefined) {
        throw invalid(`config ${path} is not valid TOML: ${redefined.what} is defined a second time at line ${error.line}, column ${error.column}`, {
          path,
          line: error.line,
          column: error.column,
          ...redefined.place,
        });
      }
      throw invalid(`config ${path} is not valid TOML: ${what} at line ${error.line}, column ${error.column}`, { path, line: error.line, column: error.column });
    }
    throw invalid(`config ${path} is not valid TOML: ${firstLine(String((error as Error)?.message ?? error))}`);
  }
  const marks: PlainDataMarks = { floats: new Set(), unsafeIntegers: new Set(), dates: new Set() };
  const data = toPlainData(parsed, marks) as Record<string, unknown>;
  if (marks.tooDeep !== undefined) {
    // Named by its first two keys: the full path is as long as the nesting.
    const top = marks.tooDeep.split('/').slice(0, 3).join('/');
    throw invalid(`config ${path}: ${describeAt(top)} nests tables or values more than ${MAX_NESTING} levels deep`, { path, ...placeAt(top) });
  }
  const [unsafe] = marks.unsafeIntegers;
  if (unsafe !== undefined) throw invalid(`config ${path}: ${describeAt(unsafe)} is an integer too large to read exactly`, { path, ...placeAt(unsafe) });
  return { data, floats: marks.floats, dates: marks.dates };
}

const firstLine = (s: string) => s.split('\n')[0]?.trim() ?? s;

/** Why a config file could not be read, with what to do where the kernel knows (a file in the way of its directory). */
function errnoText(error: unknown): string {
  const errno = error as NodeJS.ErrnoException;
  return filesystemAdvice(errno) ?? errno.code ?? 'error';
}
