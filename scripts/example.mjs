#!/usr/bin/env node
// `npm run example`: from a fresh clone, install mcpgen, build it, regenerate the Petstore
// example, install and build the generated server, and run it against the local backend.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const step = (title, cmd, args, cwd = root) => {
  console.log(`\n$ ${[cmd, ...args].join(' ')}${cwd === root ? '' : `   (in ${path.relative(root, cwd)})`}`);
  const r = spawnSync(cmd, args, { cwd, stdio: 'inherit' });
  if (r.status !== 0) {
    console.error(`\n${title} failed (exit ${r.status ?? r.signal})`);
    process.exit(r.status || 1);
  }
};

if (!existsSync(path.join(root, 'node_modules'))) step('installing mcpgen', npm, ['ci', '--no-audit', '--no-fund']);
step('building mcpgen', npm, ['run', 'build', '--silent']);
step('generating the Petstore server', process.execPath, ['bin/mcpgen.js', 'build', 'examples/petstore/mcpgen.yaml']);
const server = path.join(root, 'examples/petstore/server');
step('installing the generated server', npm, ['install', '--no-audit', '--no-fund', '--loglevel=error'], server);
step('building the generated server', npm, ['run', 'build', '--silent'], server);
step('running the demo client', process.execPath, ['examples/petstore/demo.mjs']);
