#!/usr/bin/env node
// Rewrites the `files` map of a bundle's gobstopper-plugin.json from the files on disk (every file
// but the manifest, and local leftovers such as __pycache__).
//   node examples/plugins/rehash.mjs                  every example here, the Python SDK copied in first
//                                                     (when the repository's sdk/python is there)
//   node examples/plugins/rehash.mjs <bundle-dir>...  your own bundles, exactly as they are
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, lstatSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const sdk = join(here, '..', '..', 'sdk', 'python', 'gobstopper_sdk.py');
const MANIFEST = 'gobstopper-plugin.json';

/** What running a bundle locally leaves behind, which no bundle ships (the host runs python3 -B). */
const LOCAL_LEFTOVERS = new Set(['__pycache__', '.DS_Store']);

function filesUnder(root, dir = root) {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name);
      if (LOCAL_LEFTOVERS.has(name)) {
        console.error(`rehash: leaving out ${relative(root, path)} (a local leftover); delete it before plugin add, which refuses undeclared files`);
        return [];
      }
      const rel = relative(root, path).split(sep).join('/');
      // gobstopper admits no link (symlink_refused): pinning what one points at would only defer the refusal.
      if (lstatSync(path).isSymbolicLink()) {
        console.error(`rehash: leaving out ${rel}, a symbolic link, which plugin add refuses; put the file itself there`);
        process.exitCode = 1;
        return [];
      }
      if (lstatSync(path).isDirectory()) return filesUnder(root, path);
      return rel === MANIFEST ? [] : [rel];
    });
}

const given = process.argv.slice(2);
const roots = given.length > 0 ? given.map((dir) => resolve(dir)) : readdirSync(here).sort().map((name) => join(here, name));
for (const root of roots) {
  const name = given.length > 0 ? root : relative(here, root);
  const manifestPath = join(root, MANIFEST);
  if (!existsSync(manifestPath)) {
    if (given.length === 0) continue;
    console.error(`rehash: ${root} has no ${MANIFEST}`);
    process.exitCode = 1;
    continue;
  }
  // Out of the repository (the examples copied elsewhere) there is no SDK to refresh from, and
  // each bundle's own copy is the one it ships.
  if (given.length === 0 && existsSync(join(root, 'gobstopper_sdk.py')) && existsSync(sdk)) copyFileSync(sdk, join(root, 'gobstopper_sdk.py'));
  let manifest;
  try {
    manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
  } catch (error) {
    console.error(`rehash: ${manifestPath} is not JSON (${error.message}); fix it, then rehash`);
    process.exitCode = 1;
    continue;
  }
  // Spreading an array or a string into the manifest would write a file no one meant.
  if (manifest === null || typeof manifest !== 'object' || Array.isArray(manifest)) {
    console.error(`rehash: ${manifestPath} is not a JSON object; a manifest is one, with "files" among its members`);
    process.exitCode = 1;
    continue;
  }
  const files = {};
  for (const rel of filesUnder(root)) files[rel] = createHash('sha256').update(readFileSync(join(root, rel))).digest('hex');
  const text = JSON.stringify({ ...manifest, files }, null, 2) + '\n';
  if (readFileSync(manifestPath, 'utf8') !== text) {
    writeFileSync(manifestPath, text);
    console.log(`rehashed ${name}`);
  } else console.log(`${name} is up to date`);
}
