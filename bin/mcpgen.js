#!/usr/bin/env node
// Entry of the `mcpgen` command: the CLI bundled into one module (dist/src/cli/mcpgen.bundle.mjs,
// written by `npm run build` and `prepack`; the package runs no script on install), so a build
// loads a handful of modules instead of ~250. When the bundle is missing or older than the tsc
// output beside it (dist/ rebuilt with a bare `tsc -p tsconfig.json`), the tsc output runs instead.
import { existsSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const dist = new URL('../dist/src/cli/', import.meta.url);
const bundle = new URL('mcpgen.bundle.mjs', dist);
const compiled = new URL('main.js', dist);

function fresh() {
  try {
    return statSync(bundle).mtimeMs >= statSync(compiled).mtimeMs;
  } catch {
    return false;
  }
}

if (!existsSync(bundle) && !existsSync(compiled)) {
  // a clone after `npm ci` alone: nothing is compiled yet
  process.stderr.write(`mcpgen: ${fileURLToPath(new URL('../', import.meta.url))} is not built yet: run \`npm run build\` there first\n`);
  process.exit(1);
}
const { main } = await import(fresh() || !existsSync(compiled) ? bundle.href : compiled.href);
process.exitCode = await main(process.argv.slice(2));
