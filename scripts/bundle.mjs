// Bundles the compiled CLI (dist/src/cli/main.js, tsc output) and the dependencies it imports into
// one ES module, dist/src/cli/mcpgen.bundle.mjs, which bin/mcpgen.js loads: a Petstore build then
// loads ~10 modules instead of ~250 (issue 24). Run by `npm run build` after tsc.
//
// The bundle sits beside main.js so that every `import.meta.url`-relative lookup keeps working:
// the package root is found by walking up (core/paths.ts), and the spec cache's fingerprint
// (openapi/cache.ts) reads this folder and its siblings ../source and ../core — so it stats the
// bundle itself, and a rebuilt bundle never reads an entry written by other code. The CommonJS
// modules loaded on first use (core/lazy.ts: Ajv's compiler, Handlebars, the tokenizer), the
// precompiled checks in generated/ and the tokenizer worker (eval'd source that require()s the
// tokenizer by resolved path) stay outside and load as before.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');

await build({
  entryPoints: [path.join(root, 'dist/src/cli/main.js')],
  outfile: path.join(root, 'dist/src/cli/mcpgen.bundle.mjs'),
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  // bundled CommonJS dependencies call require() for Node's built-ins
  banner: { js: "import { createRequire as __mcpgenRequire } from 'node:module';\nconst require = __mcpgenRequire(import.meta.url);" },
  legalComments: 'none',
  logLevel: 'warning',
});
