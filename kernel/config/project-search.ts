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
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { GobstopperError } from '../errors.js';
import { PROJECT_CONFIG_PLACES } from './paths.js';

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
    searchStrategy: 'project',
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

function isWithin(path: string, dir: string): boolean {
  const rel = relative(dir, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/**
 * The project directory a found file belongs to: the directory holding it, or for
 * `.config/gobstopper.toml` the one above `.config`.
 */
function projectDirOf(filepath: string): string {
  const dir = dirname(filepath);
  return basename(dir) === '.config' && basename(filepath) === 'gobstopper.toml' ? dirname(dir) : dir;
}

/**
 * Absolute path of the project file, or null. `home` defaults to the user's home directory.
 * The home directory's `.config` is where the user file lives (`.config/gobstopper/config.toml`),
 * so a `.config/gobstopper.toml` there is no project's file: it would set the policy of every
 * directory under home outside a repository, and of none inside one.
 */
export async function findProjectConfig(cwd: string, home: string = homedir()): Promise<string | null> {
  const result = await makeExplorer().search(cwd);
  if (!result) return null;
  const project = projectDirOf(result.filepath);
  if (!isWithin(project, searchCeiling(cwd, home))) return null;
  const atHome = resolve(project) === resolve(home);
  const present = PROJECT_CONFIG_PLACES.map((place) => join(project, place)).filter((path) => existsSync(path) && !(atHome && path === join(project, '.config', 'gobstopper.toml')));
  if (present.length > 1) {
    // cosmiconfig takes the first in its list; which one that is should not be a guess for the user.
    throw new GobstopperError('invalid_config', `${project} holds more than one project config file (${present.join(', ')}); keep one`, { details: { paths: present } });
  }
  return present[0] ?? null;
}
