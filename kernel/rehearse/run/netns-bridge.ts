import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ClientLaunch } from './client-launch.js';
import type { NamespaceSupport } from './network.js';

/** Stands for the stub's port in a launch until the bridge inside the namespace has bound one. */
export const PORT_PLACEHOLDER = '@@GOBSTOPPER_STUB_PORT@@';

/**
 * Runs inside the private namespace: brings `lo` up, listens on 127.0.0.1 there, forwards every
 * connection to the stub's Unix socket (a file, so it crosses the namespace boundary while TCP
 * cannot), then starts the client with the bound port filled in and exits with its status. It is
 * written out as plain CommonJS so it runs the same from sources and from the build.
 */
const BRIDGE_SOURCE = String.raw`'use strict';
const { execFileSync, spawn } = require('node:child_process');
const { readFileSync } = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const spec = JSON.parse(readFileSync(process.argv[2], 'utf8'));
execFileSync(spec.ip, ['link', 'set', 'lo', 'up'], { stdio: 'ignore' });
const server = net.createServer((inbound) => {
  const outbound = net.connect(spec.socket);
  const drop = () => { inbound.destroy(); outbound.destroy(); };
  inbound.on('error', drop);
  outbound.on('error', drop);
  inbound.pipe(outbound).pipe(inbound);
});
server.on('error', (error) => {
  process.stderr.write('gobstopper rehearsal bridge: cannot listen: ' + error.message + '\n');
  process.exit(125);
});
server.listen(spec.port, '127.0.0.1', () => {
  const port = String(server.address().port);
  const fill = (text) => text.split(spec.placeholder).join(port);
  const env = {};
  for (const [key, value] of Object.entries(spec.env)) env[key] = fill(value);
  const child = spawn(spec.command, spec.args.map(fill), { cwd: spec.cwd, env, stdio: 'inherit' });
  child.on('error', (error) => {
    process.stderr.write('gobstopper rehearsal bridge: cannot start the client: ' + error.message + '\n');
    process.exit(127);
  });
  child.on('exit', (code, signal) => {
    server.close();
    process.exit(code === null ? 128 + (os.constants.signals[signal] || 9) : code);
  });
});
`;

/** Wraps a launch so that it runs in a loopback-only namespace and reaches the stub through `socketPath`. */
export function bridgedLaunch(launch: ClientLaunch, support: Extract<NamespaceSupport, { available: true }>, workDir: string, socketPath: string, port: number): ClientLaunch {
  const script = join(workDir, 'netns-bridge.cjs');
  const specPath = join(workDir, 'netns-bridge.json');
  writeFileSync(script, BRIDGE_SOURCE, { mode: 0o600 });
  const spec = { ip: support.ip, socket: socketPath, port, placeholder: PORT_PLACEHOLDER, command: launch.command, args: launch.args, env: launch.env, cwd: launch.cwd };
  writeFileSync(specPath, JSON.stringify(spec), { mode: 0o600 });
  return {
    command: support.unshare,
    args: [...support.unshareArgs, '--', process.execPath, script, specPath],
    env: { PATH: launch.env.PATH ?? '' },
    cwd: launch.cwd,
  };
}
