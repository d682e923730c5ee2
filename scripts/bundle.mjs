// Bundles the CLI (src/cli/main.ts, with tsconfig.json's settings) and the dependencies it imports
// into one ES module, dist/src/cli/mcpgen.bundle.mjs, which bin/mcpgen.js loads: a Petstore build
// then loads 9 modules instead of 250 (issue 24). Run by `npm run build` after tsc (which
// type-checks). It reads src/, not tsc's dist/ output, so a tsc run writing dist/ at the same time
// (several people share a working tree) cannot leave half-written modules in the bundle; the
// bundle is written beside and renamed into place, so bin/mcpgen.js never loads half a file.
//
// The bundle sits beside main.js so that every `import.meta.url`-relative lookup keeps working:
// the package root is found by walking up (core/paths.ts), and the spec cache's fingerprint
// (openapi/cache.ts) reads this folder and its siblings ../source and ../core — so it hashes the
// bundle itself, and a rebuilt bundle never reads an entry written by other code. The CommonJS
// modules loaded on first use (core/lazy.ts: Ajv's compiler, Handlebars, the tokenizer), the
// precompiled checks in generated/ and the tokenizer worker (eval'd source that require()s the
// tokenizer by resolved path) stay outside and load as before.
import { renameSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');

const outfile = path.join(root, 'dist/src/cli/mcpgen.bundle.mjs');
const partial = `${outfile}.${process.pid}.tmp`;

await build({
  entryPoints: [path.join(root, 'src/cli/main.ts')],
  tsconfig: path.join(root, 'tsconfig.json'),
  outfile: partial,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  // bundled CommonJS dependencies call require() for Node's built-ins
  banner: { js: "import { createRequire as __mcpgenRequire } from 'node:module';\nconst require = __mcpgenRequire(import.meta.url);" },
  legalComments: 'none',
  logLevel: 'warning',
});
renameSync(partial, outfile);
