// Builds each evaluated API the way a search-mode server is built, once, and loads what its
// `search_tools` answers from. A manifest with only `discovery: search` (default naming, no
// overrides) is built by this checkout's CLI (dist/) into .cache/eval-search/<api>/server, the
// generated project is compiled with its own tsconfig, and its dist/ is imported: the index the
// build serialised (`search-index.gen.ts`) and the runtime's own `createToolSearch`, i.e. the
// code path of a running server. The cache key
// hashes the spec, the manifest, dist/, templates/ and generated/, so any change to the compiler
// or the runtime rebuilds.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const cacheRoot = path.join(root, '.cache', 'eval-search');

/** Every file under `dir`, sorted, relative to it. */
function walk(dir, rel = '') {
  if (!existsSync(path.join(dir, rel))) return [];
  return readdirSync(path.join(dir, rel), { withFileTypes: true })
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .flatMap((e) => (e.isDirectory() ? walk(dir, path.join(rel, e.name)) : [path.join(rel, e.name)]));
}

let toolchainHash;
/** One hash of the compiler and runtime this checkout would build with. */
function toolchain() {
  if (toolchainHash) return toolchainHash;
  const h = createHash('sha256');
  for (const top of ['dist', 'templates', 'generated']) {
    for (const f of walk(path.join(root, top)))
      h.update(`${top}/${f}\0`)
        .update(readFileSync(path.join(root, top, f)))
        .update('\0');
  }
  return (toolchainHash = h.digest('hex'));
}

/** Compiles the CLI into dist/ (the harness builds with this checkout, not a stale dist/). */
export function compile() {
  tsc(['-p', 'tsconfig.json']);
}

function tsc(args) {
  const r = spawnSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), ...args], { cwd: root, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`tsc ${args.join(' ')} failed:\n${r.stdout}${r.stderr}`);
}

/** Builds `api` (cached) and returns the dist/ directory of its compiled project. */
function build(api, spec) {
  const dir = path.join(cacheRoot, api);
  const specFile = path.join(root, spec);
  if (!existsSync(specFile)) throw new Error(`${spec} is missing: run \`npm run corpus\` first`);
  const manifest = [`name: "eval-${api}"`, 'version: "0.1.0"', `openapi: ${JSON.stringify(specFile)}`, 'output: "./server"', 'discovery: search', ''].join(
    '\n',
  );
  const key = createHash('sha256')
    .update(spec)
    .update('\0')
    .update(readFileSync(specFile))
    .update('\0')
    .update(manifest)
    .update('\0')
    .update(toolchain())
    .digest('hex');
  const keyFile = path.join(dir, 'key');
  const out = path.join(dir, 'server', 'dist');
  if (existsSync(keyFile) && readFileSync(keyFile, 'utf8') === key) return out;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'mcpgen.yaml'), manifest);
  const r = spawnSync(process.execPath, [path.join(root, 'bin/mcpgen.js'), 'build', path.join(dir, 'mcpgen.yaml'), '--quiet'], { cwd: root, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`mcpgen build of ${api} failed:\n${r.stdout}${r.stderr}`);
  // The project's own tsconfig, without type checking (a build of the project, not a test of it):
  // its dependencies resolve from this checkout's node_modules, above .cache/.
  tsc(['-p', path.join(dir, 'server', 'tsconfig.json'), '--noCheck']);
  writeFileSync(keyFile, key);
  return out;
}

/**
 * The API's search as its server runs it, and the BM25 baseline's documents.
 * @returns {Promise<{ names: string[], search: (query: string, limit: number) => string[], call: (args: object) => { text: string, results: Array<{ name: string, area?: string, score: number }> }, docs: Array<{ name: string, text: string }> }>}
 */
export async function loadApi(api, spec) {
  const out = build(api, spec);
  const url = (f) => pathToFileURL(path.join(out, f)).href;
  const { createToolSearch } = await import(url('runtime/search/search.js'));
  const { searchIndex } = await import(url('search-index.gen.js'));
  const { tools } = await import(url('tools.gen.js'));
  const byName = new Map(tools.map((t) => [t.name, t]));
  const toolSearch = createToolSearch(searchIndex, { mode: 'search' });
  /** `search_tools` as a client calls it: the answer's text and its results. */
  const call = (args) => {
    const answer = toolSearch.search(
      args,
      () => true,
      (name) => byName.get(name),
    );
    return { text: answer.content[0].text, results: answer.structuredContent?.results ?? [] };
  };
  const search = (query, limit) => call({ query, limit }).results.map((r) => r.name);
  // Baseline fields: the tool's name and its operation's summary and description from the spec
  // (the path item's when the operation has none, as OpenAPI applies them to all its operations).
  const doc = JSON.parse(readFileSync(path.join(root, spec), 'utf8'));
  const docs = tools.map((t) => {
    const item = t.http ? doc.paths?.[t.http.path] : undefined;
    const op = item?.[t.http.method.toLowerCase()];
    if (!op) return { name: t.name, text: `${t.name} ${t.title ?? ''} ${t.description ?? ''}` };
    return { name: t.name, text: `${t.name} ${op.summary || item.summary || ''} ${op.description || item.description || ''}` };
  });
  return { names: tools.map((t) => t.name), search, call, docs };
}
