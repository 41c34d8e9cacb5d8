#!/usr/bin/env node
// Writes oclif.manifest.json from the compiled commands in dist/, or with --check compares it with
// the committed file: a stale manifest hides new commands and shows deleted ones.
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Plugin } from '@oclif/core';
import { writeOrCheck } from './generated-file.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

export async function generateManifestText() {
  const plugin = new Plugin({ root, type: 'core', ignoreManifest: true, errorOnManifestCreate: true, respectNoCacheDefault: true });
  await plugin.load();
  return JSON.stringify(plugin.manifest, null, 2) + '\n';
}

if (import.meta.url === `file://${process.argv[1]}`) {
  writeOrCheck(root, join(root, 'oclif.manifest.json'), await generateManifestText());
}
