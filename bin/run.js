#!/usr/bin/env node
import { homedir } from 'node:os';
import { join } from 'node:path';
import { execute } from '@oclif/core';

// Stack traces under GOBSTOPPER_DEBUG name TypeScript files and lines instead of bundle chunks.
if (process.env.GOBSTOPPER_DEBUG) process.setSourceMapsEnabled(true);

// oclif reads the list of CLI plugins `gobstopper plugins` installed at every start, and reports a
// list it cannot read as a Node process warning: several lines, a pid, advice about Node flags and,
// for a list that is not JSON, not the file's name. Each warning is said on one line instead, naming
// the list when it is about it. A file where a directory on its path belongs is no list at all: the
// commands that keep data there name that file themselves.
const cliPlugins = join(process.env.GOBSTOPPER_DATA_DIR || join(process.env.XDG_DATA_HOME || join(homedir(), '.local', 'share'), 'gobstopper-cli'), 'package.json');
process.removeAllListeners('warning');
process.on('warning', (warning) => {
  if (warning.code === 'ENOTDIR' && warning.path === cliPlugins) return;
  const said = String(warning.message).replace(/\s*\n\s*/g, ' ').replace(/[\u0000-\u001f\u007f-\u009f]/g, '?').trim();
  const aboutList = warning.path === cliPlugins || warning.name === 'SyntaxError' || said.includes(cliPlugins);
  process.stderr.write(`warning: ${said}${aboutList ? ` (in ${cliPlugins}, the list of npm plugins \`gobstopper plugins\` installed)` : ''}\n`);
});

await execute({ dir: import.meta.url });
