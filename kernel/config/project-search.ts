/**
 * Finds the project config file: the nearest .gobstopperrc.toml, gobstopper.config.toml or
 * .config/gobstopper.toml from the working directory up to the enclosing package root.
 *
 * cosmiconfig's public factory first looks in the process working directory for a "meta" config and
 * executes `.config/config.{js,ts,cjs,mjs}` if present. gobstopper is routinely run inside repositories
 * nobody has reviewed, so it drives cosmiconfig's Explorer (the class the factory wraps) with a
 * complete option set instead, and the only loader it registers returns the path: the file itself is
 * then read under the same rules as the user file (regular, no symlink, 64 KiB).
 */
import { createRequire } from 'node:module';
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

/** Absolute path of the project file, or null. */
export async function findProjectConfig(cwd: string): Promise<string | null> {
  const result = await makeExplorer().search(cwd);
  return result ? result.filepath : null;
}
