#!/usr/bin/env node
// Rewrites the `files` map of every example bundle's gobstopper-plugin.json from the files on disk
// (every file but the manifest), and copies the Python SDK into the Python examples first.
// Run after editing an example: node examples/plugins/rehash.mjs
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const sdk = join(here, '..', '..', 'sdk', 'python', 'gobstopper_sdk.py');
const MANIFEST = 'gobstopper-plugin.json';

function filesUnder(root, dir = root) {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) return filesUnder(root, path);
      const rel = relative(root, path).split(sep).join('/');
      return rel === MANIFEST ? [] : [rel];
    });
}

for (const name of readdirSync(here).sort()) {
  const root = join(here, name);
  const manifestPath = join(root, MANIFEST);
  if (!existsSync(manifestPath)) continue;
  if (existsSync(join(root, 'gobstopper_sdk.py'))) copyFileSync(sdk, join(root, 'gobstopper_sdk.py'));
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
  const files = {};
  for (const rel of filesUnder(root)) files[rel] = createHash('sha256').update(readFileSync(join(root, rel))).digest('hex');
  const text = JSON.stringify({ ...manifest, files }, null, 2) + '\n';
  if (readFileSync(manifestPath, 'utf8') !== text) {
    writeFileSync(manifestPath, text);
    console.log(`rehashed ${name}`);
  } else console.log(`${name} is up to date`);
}
