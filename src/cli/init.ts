/**
 * `mcpgen init <spec> [--out mcpgen.yaml] [--tag T]… [--exclude-tag T]… [--method M]…`: reads an
 * OpenAPI description and writes a commented starter manifest for it (src/cli/init/starter.ts), never
 * over an existing file. The spec is loaded and checked as `build` does, and modelled with every
 * operation included — or, with the flags, only the slice they select (src/cli/init/slice.ts), which
 * the starter then writes as `include`/`exclude` — so the manifest can name the tools, the
 * variables the server reads and the size of the tool surface.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { lstat, mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type Diagnostic, Diagnostics } from '../core/diagnostics.js';
import { isObject } from '../core/json.js';
import { PACKAGE_ROOT } from '../core/paths.js';
import { buildIr } from '../ir/build.js';
import { DEFAULT_LIMITS } from '../ir/surface/fit.js';
import type { IrServer } from '../ir/types.js';
import { loadManifest, resolveManifest, toDisplayPath } from '../manifest/load.js';
import { type LoadedSpec, loadSpec } from '../openapi/load.js';
import { knownTags, listOperations } from '../openapi/operations.js';
import type { Io } from './commands.js';
import { formatDiagnostics } from './format.js';
import { type Slice, type SliceFlags, sliceFlagsText, sliceSelectors } from './init/slice.js';
import { commentText, proposeArgumentRules, starterManifest } from './init/starter.js';
import { paint } from './terminal.js';

const SEMVER = /^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/;

/** Words of an API title that say nothing about which API it is. */
const FILLER = new Set([
  's',
  'a',
  'an',
  'the',
  'api',
  'apis',
  'openapi',
  'swagger',
  'spec',
  'specs',
  'specification',
  'official',
  'rest',
  'restful',
  'http',
  'documentation',
  'docs',
  'definition',
  'reference',
  'service',
  'v1',
  'v2',
  'v3',
]);

/**
 * A legal manifest `name` from the spec's title (else its file name): the words before a ` - `,
 * `+`, `|`, `:` or `(`, without filler such as "API", "official" or "OpenAPI spec", at most four,
 * lower case and joined by `-` (`GitHub's official OpenAPI spec + Octokit extension` ⇒ `github`).
 */
export function serverName(title: string | undefined, specFile: string): string {
  const words = (s: string) =>
    s
      .normalize('NFKD')
      .replace(/[\u0300-\u036f]/g, '')
      .replace(/ß/g, 'ss')
      .toLowerCase()
      .split(/[^a-z0-9]+/)
      .filter((w) => w !== '');
  const fromTitle = (t: string) => {
    const head = t.split(/\s[-–—]\s|[+|:(]/)[0] ?? '';
    const kept = words(head).filter((w) => !FILLER.has(w));
    return (kept.length > 0 ? kept : words(t)).slice(0, 4).join('-');
  };
  return (
    fromTitle(title ?? '') ||
    words(path.basename(specFile).replace(/\.[^.]*$/, ''))
      .slice(0, 4)
      .join('-') ||
    'api'
  );
}

/** A semver `version` from `info.version`: kept when it is one, else its leading numbers (`v2` ⇒ `2.0.0`, `2022-11-28` ⇒ `2022.11.28`), else `0.1.0`. */
export function serverVersion(specVersion: string | undefined): string {
  if (specVersion === undefined) return '0.1.0';
  if (SEMVER.test(specVersion)) return specVersion;
  const m = /^\s*v?(\d+)(?:[.-](\d+))?(?:[.-](\d+))?/i.exec(specVersion);
  if (!m) return '0.1.0';
  return [m[1], m[2] ?? '0', m[3] ?? '0'].map((n) => String(Number(n!))).join('.');
}

/** The first paragraph of `info.summary` or `info.description`, cut at a sentence or word near 300 characters. */
export function serverDescription(info: Record<string, unknown>): string | undefined {
  const raw = typeof info.summary === 'string' && info.summary.trim() !== '' ? info.summary : typeof info.description === 'string' ? info.description : '';
  const para = raw.trim().split(/\n\s*\n/)[0] ?? '';
  // markdown links become their text; the rest stays as written, on one line
  const text = commentText(para.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1'), 10_000);
  if (text === '') return undefined;
  if (text.length <= 300) return text;
  const cut = text.slice(0, 300);
  const sentence = cut.lastIndexOf('. ');
  if (sentence > 100) return cut.slice(0, sentence + 1);
  const word = cut.lastIndexOf(' ');
  return `${cut.slice(0, word > 100 ? word : 300).trimEnd()}…`;
}

/** The names of the spec's security schemes, in document order. */
function definedSchemes(spec: LoadedSpec): string[] {
  const doc = spec.document;
  const container = spec.version === '2.0' ? doc.securityDefinitions : isObject(doc.components) ? doc.components.securitySchemes : undefined;
  return isObject(container) ? Object.keys(container) : [];
}

/** A `/`-separated path from `fromDir` to `file`, starting with `./` or `../` (absolute when there is none). */
function relativeTo(fromDir: string, file: string): string {
  const rel = path.relative(fromDir, file);
  if (path.isAbsolute(rel)) return file.split(path.sep).join('/');
  const posix = rel.split(path.sep).join('/');
  return posix.startsWith('../') ? posix : `./${posix}`;
}

/**
 * The starter's `$schema`: a location that holds on every machine that checks the project out —
 * mcpgen's copy in the project's own `node_modules` (mcpgen as a dev dependency: found from the
 * manifest's folder upwards, as Node resolves packages), relative to the manifest; otherwise the
 * schema of this mcpgen version on the npm CDN. Never the path of the mcpgen that happens to run
 * (a clone or a global install), which is on no other machine.
 */
export function schemaLocation(manifestDir: string): string {
  for (let dir = path.resolve(manifestDir); ; dir = path.dirname(dir)) {
    const local = path.join(dir, 'node_modules', 'mcpgen', 'schemas', 'manifest.schema.json');
    if (existsSync(local)) return relativeTo(path.resolve(manifestDir), local);
    if (path.dirname(dir) === dir) break;
  }
  const { version } = JSON.parse(readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string };
  return `https://unpkg.com/mcpgen@${version}/schemas/manifest.schema.json`;
}

/**
 * The model of the full spec with default settings: a minimal manifest (`name`, `openapi`) is
 * written to a temporary folder and resolved the way `build` resolves one, so tool names,
 * variable names and the measured surface are exactly what a build of the starter gives.
 */
async function modelOf(spec: LoadedSpec, specAbs: string, name: string, slice: Slice, cwd: string, diagnostics: Diagnostics): Promise<IrServer | undefined> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'mcpgen-init-'));
  try {
    const file = path.join(dir, 'mcpgen.yaml');
    // JSON is YAML: the selectors go in as data, whatever the tags say
    const selectors =
      (slice.include ? `include: ${JSON.stringify(slice.include)}\n` : '') + (slice.exclude ? `exclude: ${JSON.stringify(slice.exclude)}\n` : '');
    const model = async (extra: string) => {
      writeFileSync(file, `name: ${JSON.stringify(name)}\nopenapi: ${JSON.stringify(specAbs)}\n${selectors}${extra}`);
      const own = new Diagnostics();
      const loaded = await loadManifest(file, own, { cwd });
      if (!loaded || !loaded.valid)
        throw new Error(
          `the minimal manifest did not load: ${own
            .sorted()
            .map((d) => d.message)
            .join('; ')}`,
        );
      return { own, loaded, ir: buildIr({ manifest: resolveManifest(loaded), locateManifest: (p, o) => loaded.source.locate(p, o), spec, diagnostics: own }) };
    };
    let { own, loaded, ir } = await model('');
    // the argument rules the starter proposes change the surface it states: model it with them
    const rules = proposeArgumentRules(ir);
    if (rules.length > 0) ({ own, loaded, ir } = await model(`arguments: ${JSON.stringify(rules)}\n`));
    // what the model says about the spec is the user's business; about the minimal manifest
    // (no base URL, over budget), the starter's comments say it. A scheme sent as a static token
    // is acknowledged by the starter itself: it names every scheme's variable (`auth.<scheme>.env`)
    // and says so in a comment
    for (const d of own.sorted()) if (d.location.file !== loaded.displayPath && d.code !== 'MCPGEN_AUTH_UNSUPPORTED_SCHEME') push(diagnostics, d);
    return ir;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function push(diagnostics: Diagnostics, d: Diagnostic): void {
  if (d.severity === 'error') diagnostics.error(d.code, d.message, d.help, d.location);
  else diagnostics.warn(d.code, d.message, d.help, d.location);
}

/** `mcpgen init`. Exit 0 when the manifest was written, 1 when it was not. */
export async function runInit(opts: { spec: string; out?: string } & Partial<SliceFlags>, io: Io): Promise<number> {
  const flags: SliceFlags = { tags: opts.tags ?? [], excludeTags: opts.excludeTags ?? [], methods: opts.methods ?? [] };
  const specAbs = path.resolve(io.cwd, opts.spec);
  const outAbs = path.resolve(io.cwd, opts.out ?? 'mcpgen.yaml');
  const outShown = toDisplayPath(io.cwd, outAbs);
  const err = io.colors?.stderr ?? paint(false);
  const refuse = (why: string) => {
    io.stderr(
      `${err.bold(outShown)} ${err.bold(err.red('error'))} ${why}\n  ${err.cyan('help:')} mcpgen init never overwrites a file: remove it, or write elsewhere with --out <path>\n`,
    );
    return 1;
  };
  // checked before reading a large spec, and again (atomically) when writing
  if (await exists(outAbs)) return refuse(`${outShown} already exists`);

  const diagnostics = new Diagnostics();
  const specShown = toDisplayPath(io.cwd, specAbs);
  const spec = await loadSpec({
    file: specAbs,
    displayPath: specShown,
    rootDirs: [path.dirname(specAbs)],
    referencedAt: { file: specShown, pointer: '', line: 0, col: 0 },
    allowRemoteRefs: [],
    diagnostics,
  });
  if (!spec) {
    io.stderr(formatDiagnostics(diagnostics.sorted(), 'text', io.colors?.stderr));
    io.stderr(`mcpgen init: ${specShown} cannot be used; nothing written.\n`);
    return 1;
  }
  const ops = listOperations(spec.document);
  const selected = sliceSelectors(flags, knownTags(spec.document, ops));
  if ('errors' in selected) {
    for (const e of selected.errors) io.stderr(`${err.bold(e.flag)} ${err.bold(err.red('error'))} ${e.message}\n  ${err.cyan('help:')} ${e.help}\n`);
    io.stderr(`mcpgen init: nothing written.\n`);
    return 1;
  }
  const slice = selected.slice;
  const sliced = slice.include !== undefined || slice.exclude !== undefined;
  const info = isObject(spec.document.info) ? spec.document.info : {};
  const title = typeof info.title === 'string' ? info.title : undefined;
  const infoVersion = typeof info.version === 'string' ? info.version : undefined;
  const name = serverName(title, specAbs);
  const ir = await modelOf(spec, specAbs, name, slice, io.cwd, diagnostics);
  if (!ir) return 1;
  if (sliced && ir.tools.length === 0 && ops.length > 0) {
    io.stderr(
      `${err.bold(sliceFlagsText(flags))} ${err.bold(err.red('error'))} the slice selects none of the spec's ${ops.length} operations\n` +
        `  ${err.cyan('help:')} an operation is kept when it has one of the --tag tags and one of the --method methods, and none of the --exclude-tag tags; loosen them (\`mcpgen init\` without flags lists the tags)\nmcpgen init: nothing written.\n`,
    );
    return 1;
  }
  const version = serverVersion(infoVersion);
  const description = serverDescription(info);
  const text = starterManifest({
    name,
    version,
    ...(infoVersion !== undefined && version !== infoVersion ? { specVersionText: infoVersion } : {}),
    ...(title !== undefined ? { title } : {}),
    ...(description !== undefined ? { description } : {}),
    openapi: relativeTo(path.dirname(outAbs), specAbs),
    specVersion: spec.version,
    ir,
    definedSchemes: definedSchemes(spec),
    schema: commentText(schemaLocation(path.dirname(outAbs)), 4096),
    maxListBytes: DEFAULT_LIMITS.maxListBytes,
    ...(sliced ? { slice: { ...slice, flags: sliceFlagsText(flags), specOperations: ops.length } } : {}),
  });
  try {
    await mkdir(path.dirname(outAbs), { recursive: true });
    await writeFile(outAbs, text, { flag: 'wx' });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return refuse(`${outShown} already exists`);
    return refuse(`cannot write ${outShown}: ${code ?? String(e)}`);
  }
  const list = diagnostics.sorted();
  if (list.length) io.stderr(formatDiagnostics(list, 'text', io.colors?.stderr));
  const c = io.colors?.stdout ?? paint(false);
  const s = ir.surface;
  io.stdout(
    `${c.green('Wrote')} ${c.bold(outShown)} for ${title !== undefined ? `"${commentText(title, 80)}" ` : ''}(${specShown}): ` +
      `${ir.tools.length} tools${sliced ? ` of ${ops.length} operations` : ''}${s ? `, tools/list ${s.listBytes.toLocaleString('en-US')} bytes` : ''}, ${ir.securitySchemes.length} security scheme(s) mapped.\n` +
      (diagnostics.hasErrors ? `The spec has errors \`mcpgen build\` will report until they are fixed (above).\n` : '') +
      (sliced
        ? `Next: \`mcpgen build ${outShown}\`.\n`
        : `Next: trim it (see its comments; \`mcpgen init --tag …\` writes a starter for a slice instead), then \`mcpgen build ${outShown}\`.\n`),
  );
  return 0;
}

async function exists(p: string): Promise<boolean> {
  try {
    await lstat(p);
    return true;
  } catch {
    return false;
  }
}
