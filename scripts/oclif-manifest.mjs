#!/usr/bin/env node
// Writes oclif.manifest.json from the compiled commands in dist/, or with --check compares it with
// the committed file: a stale manifest hides new commands and shows deleted ones.
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Plugin } from '@oclif/core';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

export async function generateManifestText() {
  const plugin = new Plugin({ root, type: 'core', ignoreManifest: true, errorOnManifestCreate: true, respectNoCacheDefault: true });
  await plugin.load();
  return JSON.stringify(plugin.manifest, null, 2) + '\n';
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const text = await generateManifestText();
  const file = join(root, 'oclif.manifest.json');
  if (process.argv.includes('--check')) {
    if (!existsSync(file) || readFileSync(file, 'utf8') !== text) {
      console.error('oclif.manifest.json is stale; run npm run build');
      process.exit(1);
    }
    console.log('oclif.manifest.json is up to date');
  } else {
    writeFileSync(file, text);
  }
}
