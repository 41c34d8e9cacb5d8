#!/usr/bin/env node
// One build: type-checked kernel + SDK (tsc), every built-in plugin bundled into a self-contained
// bundle directory under dist/plugins/<name>/ with a manifest whose `files` pins what was built.
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const sha256 = (buf) => createHash('sha256').update(buf).digest('hex');

function compileKernel() {
  execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(root, 'tsconfig.build.json')], {
    stdio: 'inherit',
  });
  // tsc does not emit the generated standalone validators (plain JS); they sit beside the types.
  mkdirSync(join(dist, 'schemas', 'generated'), { recursive: true });
  cpSync(join(root, 'schemas', 'generated', 'validators.js'), join(dist, 'schemas', 'generated', 'validators.js'));
}

async function bundlePlugin(name) {
  const srcDir = join(root, 'plugins', name);
  const manifestPath = join(srcDir, 'gobstopper-plugin.json');
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
  const outDir = join(dist, 'plugins', name);
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  await build({
    absWorkingDir: root,
    entryPoints: [join(srcDir, 'src', 'main.ts')],
    outfile: join(outDir, manifest.executable),
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    legalComments: 'none',
    logLevel: 'warning',
  });
  const files = {};
  for (const file of readdirSync(outDir).sort()) files[file] = sha256(readFileSync(join(outDir, file)));
  const updated = { ...manifest, files };
  const text = JSON.stringify(updated, null, 2) + '\n';
  writeFileSync(join(outDir, 'gobstopper-plugin.json'), text);
  // The source manifest carries the same pins, so a reader of plugins/ sees exactly what ships.
  // A frozen build (tests, CI) leaves committed files alone so a test can catch stale pins.
  if (!frozen && readFileSync(manifestPath, 'utf8') !== text) writeFileSync(manifestPath, text);
  return name;
}

// `--plugin <name>` (repeatable) rebuilds only those bundles; `--kernel` only the kernel.
const args = process.argv.slice(2);
const only = args.flatMap((a, i) => (a === '--plugin' && args[i + 1] ? [args[i + 1]] : []));
const kernelOnly = args.includes('--kernel');
const frozen = args.includes('--frozen');
if (only.length === 0) compileKernel();
const names = kernelOnly || !existsSync(join(root, 'plugins'))
  ? []
  : readdirSync(join(root, 'plugins')).filter(
      (n) => (only.length === 0 || only.includes(n)) && existsSync(join(root, 'plugins', n, 'gobstopper-plugin.json')) && existsSync(join(root, 'plugins', n, 'src', 'main.ts')),
    );
const built = await Promise.all(names.map(bundlePlugin));
if (only.length === 0 && !frozen) {
  execFileSync(process.execPath, [join(root, 'scripts', 'oclif-manifest.mjs')], { stdio: 'inherit' });
  execFileSync(process.execPath, [join(root, 'scripts', 'command-reference.mjs')], { stdio: 'inherit' });
}
console.log(`built kernel and ${built.length} plugin bundle(s): ${built.join(', ')}`);
