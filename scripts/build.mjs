#!/usr/bin/env node
// One build: type-checked kernel + SDK (tsc), the CLI's commands bundled from that output into
// dist/cli/, and every built-in plugin bundled into a self-contained bundle directory under
// dist/plugins/<name>/ with a manifest whose `files` pins what was built.
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

/** Every .js file under `dir`, recursively. */
function jsFiles(dir) {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile() && d.name.endsWith('.js'))
    .map((d) => join(d.parentPath, d.name));
}

/**
 * The commands oclif loads (and its help class and hook) bundled with the kernel modules and
 * dependencies they import, into dist/cli/. Node 20 loads each ES module for about a millisecond
 * (resolve, read, compile), and a plan imported ~400: bundled, it starts its first plugin ~0.1 s
 * sooner. Code the commands share goes into chunks, and what they import on first use stays
 * apart, loaded only then: execa as a chunk of its own, the Ajv compiler from node_modules. oclif itself stays external: the
 * commands extend its classes. The tsc output in dist/kernel stays for the worker threads, the
 * benchmarks and anything else that imports kernel modules.
 */
async function bundleCli() {
  const cli = join(dist, 'kernel', 'cli');
  const out = join(dist, 'cli');
  rmSync(out, { recursive: true, force: true });
  await build({
    absWorkingDir: root,
    entryPoints: [...jsFiles(join(cli, 'commands')), join(cli, 'help-class.js'), ...jsFiles(join(cli, 'hooks'))],
    outbase: cli,
    outdir: out,
    chunkNames: 'chunks/[name]-[hash]',
    bundle: true,
    splitting: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // Ajv is a CommonJS package the kernel imports on first use for its named export, which only
    // Node's own loader finds in a CommonJS module.
    external: ['@oclif/core', '@oclif/plugin-plugins', 'ajv'],
    // CommonJS dependencies inside an ES module bundle call require, which ES modules lack.
    banner: { js: "import { createRequire as __gobCreateRequire } from 'node:module'; const require = __gobCreateRequire(import.meta.url);" },
    legalComments: 'none',
    // Linked maps, chained through tsc's, lead a GOBSTOPPER_DEBUG stack trace from a chunk back to
    // the TypeScript line; without the flag Node never reads them.
    sourcemap: 'linked',
    sourcesContent: false,
    logLevel: 'warning',
  });
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
    // The bundle names each module by its path in comments; a node_modules that is a link to
    // another clone's would otherwise put that clone's location into the bytes the manifest pins.
    preserveSymlinks: true,
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
if (only.length === 0) {
  compileKernel();
  await bundleCli();
}
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
