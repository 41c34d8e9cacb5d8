/**
 * Private copies for the commands that measure sessions (eval, bench, eval-study): a 0700
 * temporary directory removed when the command ends, even when it is interrupted, and by the next
 * such command when the process was killed outright.
 */
import { constants as fsConstants } from 'node:fs';
import { lstat, mkdir, mkdtemp, open, readdir, rm, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GobstopperError } from '../errors.js';
import { creatingFile, removeOnExit } from '../exit-cleanup.js';
import { processAlive } from '../vault/lock.js';

/**
 * A private temporary directory (0700, in the system temp dir) for the copies one command works
 * on. Each copy sits in its own subdirectory under the source's own file name, because providers
 * read identity from the name (a Codex rollout's id, a Claude session file's stem).
 */
export class PrivateWorkspace {
  private copies = 0;
  /** Copy path -> what it stands for (the user's file, or a vault: selector). */
  private readonly standsFor = new Map<string, string>();

  private constructor(readonly dir: string) {}

  static async create(prefix = 'gobstopper-eval-'): Promise<PrivateWorkspace> {
    await sweepDeadWorkspaces();
    // mkdtemp creates the directory 0700. The pid in the name lets a later run remove it should this
    // one be killed (SIGKILL runs no exit hook).
    return new PrivateWorkspace(await creatingFile(() => mkdtemp(join(tmpdir(), `${prefix}${process.pid}-`))));
  }

  /** Creates a new 0600 file named `name` in a subdirectory of its own, exclusively. */
  private async create(kind: string, name: string) {
    const sub = join(this.dir, `${kind}-${++this.copies}`);
    // Through creatingFile: an entry landing while the exit hook removes the workspace would stop
    // that removal (ENOTEMPTY) and leave the copy of a session behind.
    await creatingFile(() => mkdir(sub, { mode: 0o700 }));
    const path = join(sub, name);
    const handle = await creatingFile(() => open(path, fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL | fsConstants.O_NOFOLLOW, 0o600));
    return { path, handle };
  }

  /**
   * Writes `bytes` to a new 0600 file named `name`; `mtimeMs` carries the source's age over. An
   * error naming the copy is told about `original` instead (see aboutOriginals).
   */
  async writeCopy(name: string, bytes: Buffer, mtimeMs?: number, original?: string): Promise<string> {
    const { path, handle } = await this.create('copy', name);
    if (original !== undefined) this.standsFor.set(path, original);
    try {
      let written = 0;
      while (written < bytes.length) written += (await handle.write(bytes, written, bytes.length - written, null)).bytesWritten;
    } finally {
      await handle.close();
    }
    if (mtimeMs !== undefined) await utimes(path, new Date(mtimeMs), new Date(mtimeMs));
    return path;
  }

  /**
   * A new empty private staging file for a provider to render into. Unlike apply's staging (which
   * is published under a name the provider picks), it carries the source's own file name, so the
   * provider verifies the candidate under the identity the source has (a Codex rollout's id). An
   * error naming it is told about `standsFor` instead (see aboutOriginals).
   */
  async stagingFile(name: string, standsFor?: string): Promise<string> {
    const { path, handle } = await this.create('stage', name);
    await handle.close();
    if (standsFor !== undefined) this.standsFor.set(path, standsFor);
    return path;
  }

  /**
   * What a provider says about a private copy is said about the file it stands for: the copy is a
   * name nobody can look up once the command is over.
   */
  aboutOriginals(error: unknown): unknown {
    if (!(error instanceof GobstopperError)) return error;
    let message = error.message;
    for (const [copy, original] of this.standsFor) message = message.replaceAll(copy, original);
    return message === error.message ? error : new GobstopperError(error.code, message, { exit: error.exit, details: error.details, cause: error });
  }

  async dispose(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true });
  }
}

/** The workspaces of every measuring command, with the pid of the process that made each. */
const WORKSPACE_NAME = /^gobstopper-(?:eval|study)-(\d+)-[A-Za-z0-9]{6}$/;
let swept = false;

/**
 * Removes the workspaces of runs that were killed (their process is gone): each holds a whole copy
 * of a session. Only real directories of this user's are touched; the temp dir is shared.
 */
async function sweepDeadWorkspaces(): Promise<void> {
  // Once a process: a bench measures hundreds of sessions, each in a workspace of its own.
  if (swept) return;
  swept = true;
  const dir = tmpdir();
  const names = await readdir(dir).catch(() => [] as string[]);
  for (const name of names) {
    const match = WORKSPACE_NAME.exec(name);
    if (!match || processAlive(Number(match[1]))) continue;
    const path = join(dir, name);
    const st = await lstat(path).catch(() => null);
    if (!st?.isDirectory() || st.uid !== process.getuid?.()) continue;
    await rm(path, { recursive: true, force: true }).catch(() => undefined);
  }
}

export async function withWorkspace<R>(prefix: string, body: (ws: PrivateWorkspace) => Promise<R>): Promise<R> {
  const ws = await PrivateWorkspace.create(prefix);
  const kept = removeOnExit(ws.dir);
  try {
    return await body(ws);
  } catch (error) {
    throw ws.aboutOriginals(error);
  } finally {
    await ws.dispose();
    kept();
  }
}
