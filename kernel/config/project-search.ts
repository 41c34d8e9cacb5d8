/**
 * Finds the project config file: the nearest .gobstopperrc.toml, gobstopper.config.toml or
 * .config/gobstopper.toml from the working directory up to the enclosing package or repository
 * root, or the home directory, whichever comes first. Outside all of them only the working
 * directory itself is searched: a file in a shared parent such as /tmp, which anyone may write,
 * must not set the policy of every run below it.
 *
 * cosmiconfig's public factory first looks in the process working directory for a "meta" config and
 * executes `.config/config.{js,ts,cjs,mjs}` if present. gobstopper is routinely run inside repositories
 * nobody has reviewed, so it drives cosmiconfig's Explorer (the class the factory wraps) with a
 * complete option set instead, and the only loader it registers returns the path: the file itself is
 * then read under the same rules as the user file (regular, no symlink, 64 KiB).
 *
 * cosmiconfig still reads each file it finds before that loader sees it, and a read of a FIFO waits
 * for a writer forever (a Ctrl-C cannot end a process whose thread is stuck in that open). So the
 * walk is this module's, one directory at a time up to the ceiling, and anything at a search place
 * that is not a regular file is refused before cosmiconfig looks in that directory.
 */
import { accessSync, constants, existsSync, lstatSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { GobstopperError } from '../errors.js';
import { PROJECT_CONFIG_PLACES } from './paths.js';
import { readConfigText, UnusableConfigPath } from './read-config-file.js';

interface SearchResult {
  filepath: string;
}

interface Explorer {
  search(from: string): Promise<SearchResult | null>;
}

type ExplorerClass = new (options: Record<string, unknown>) => Explorer;

const require = createRequire(import.meta.url);
const { Explorer: ExplorerImpl } = require('cosmiconfig/dist/Explorer.js') as { Explorer: ExplorerClass };

const locateOnly = (filepath: string) => ({ located: filepath });

function makeExplorer(): Explorer {
  return new ExplorerImpl({
    moduleName: 'gobstopper',
    searchPlaces: [...PROJECT_CONFIG_PLACES],
    // An empty project file still counts: it stops the walk, so a parent's file is not picked up.
    ignoreEmptySearchPlaces: false,
    cache: false,
    transform: (result: unknown) => result,
    loaders: { '.toml': locateOnly },
    metaConfigFilePath: null,
    mergeImportArrays: true,
    mergeSearchPlaces: false,
    // One directory per search: the walk up is findProjectConfig's.
    searchStrategy: 'none',
    applyPackagePropertyPathToConfiguration: false,
  });
}

/** What marks the top of a project: cosmiconfig stops at the package files itself. */
const ROOT_MARKERS = ['.git', 'package.json', 'package.yaml'];

/** The highest directory the search may reach from `cwd` (see the module comment). */
export function searchCeiling(cwd: string, home: string): string {
  const start = resolve(cwd);
  const top = resolve(home);
  for (let dir = start; ; dir = dirname(dir)) {
    if (dir === top || ROOT_MARKERS.some((marker) => existsSync(join(dir, marker)))) return dir;
    if (dirname(dir) === dir) return start;
  }
}

/**
 * Absolute path of the project file, or null. `home` defaults to the user's home directory.
 * The home directory's `.config` is where the user file lives (`.config/gobstopper/config.toml`),
 * so a `.config/gobstopper.toml` there is no project's file: it would set the policy of every
 * directory under home outside a repository, and of none inside one.
 */
export async function findProjectConfig(cwd: string, home: string = homedir()): Promise<string | null> {
  const explorer = makeExplorer();
  const ceiling = searchCeiling(cwd, home);
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    const atHome = dir === resolve(home);
    const places = PROJECT_CONFIG_PLACES.map((place) => join(dir, place)).filter((path) => !(atHome && path === join(dir, '.config', 'gobstopper.toml')));
    refuseIrregular(places);
    const result = await explorer.search(dir);
    if (result) {
      const present = places.filter((path) => existsSync(path));
      if (present.length > 1) {
        // cosmiconfig takes the first in its list; which one that is should not be a guess for the user.
        throw new GobstopperError('invalid_config', `${dir} holds more than one project config file (${present.join(', ')}); keep one`, { details: { paths: present } });
      }
      if (present.length === 1) return present[0]!;
    }
    if (dir === ceiling || dirname(dir) === dir) return null;
  }
}

/**
 * Anything at a search place but a regular file gets the error any config path would (a FIFO is never
 * opened). So does a path that cannot be looked at (a `.config` symlink loop) and a file this user may
 * not read: cosmiconfig passes over an unreadable file, and the walk would then take a parent
 * directory's file in its place, or none, without a word.
 */
function refuseIrregular(places: readonly string[]): void {
  for (const path of places) {
    let isFile = false;
    try {
      isFile = lstatSync(path).isFile();
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // Nothing there, a file where the path wants a directory (`.config` as a file), or a directory
      // this user may not search (someone else's `.config` in /tmp), which hides whether a file is there.
      if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'EACCES') continue;
    }
    if (!isFile) {
      readConfigText(path);
      continue;
    }
    try {
      accessSync(path, constants.R_OK);
    } catch (error) {
      throw new UnusableConfigPath(`cannot open config ${path}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
    }
  }
}
