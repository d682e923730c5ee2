#!/usr/bin/env node
// Entry of the `mcpgen` command: the CLI bundled into one module (dist/src/cli/mcpgen.bundle.mjs,
// written by `npm run build` and `prepack`; the package runs no script on install), so a build
// loads a handful of modules instead of ~250. When the bundle is missing or older than the tsc
// output beside it (dist/ rebuilt with a bare `tsc -p tsconfig.json`), the tsc output runs instead.
import { statSync } from 'node:fs';

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

const { main } = await import(fresh() ? bundle.href : compiled.href);
process.exitCode = await main(process.argv.slice(2));
