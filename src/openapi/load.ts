/**
 * Stage 1 (load) for the OpenAPI side: read the spec, check its version and its schema, and
 * bundle multi-file descriptions into one document whose `$ref`s are all internal (`#/...`).
 *
 * Nothing is dereferenced here: circular schemas stay as `$ref`s and are turned into `$defs`
 * by the schema converter. Remote `$ref`s are refused unless the manifest allows their prefix;
 * local files outside the manifest's directory tree are refused too (a spec is untrusted input
 * and must not read arbitrary files into the generated project).
 */
import { realpathSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { Diagnostics, type Location, parsePointer, pointer } from '../core/diagnostics.js';
import { isObject } from '../core/json.js';
import { parseYamlSource, type YamlSource } from '../source/source.js';
import { checkDepth, checkFiniteNumbers, checkRefCycles, shallowCopy } from './check.js';
import { metaSchemaIssues } from './meta-schema.js';
import { type DocumentScan, scanDocument } from './scan.js';
import type { SpecVersion } from './version.js';

/** Which OpenAPI generation a document belongs to (openapi/version.ts, which meta-schema.ts reads without this module). */
export type { SpecVersion };

/** A loaded, bundled OpenAPI document. */
export type LoadedSpec = {
  version: SpecVersion;
  /** The bundled document: every `$ref` is internal (`#/...`). */
  document: Record<string, unknown>;
  /** The root file as parsed, for locating diagnostics. */
  source: YamlSource;
  /** Set when the document went through bundling (which may edit the parsed document in place: `document` is then not the text's value). */
  bundled?: true;
};

/** Options of {@link loadSpec}. */
export type LoadSpecOptions = {
  /** Absolute path of the spec file. */
  file: string;
  /** Path shown in diagnostics. */
  displayPath: string;
  /** Local `$ref`s must stay inside one of these directories. */
  rootDirs: readonly string[];
  /** Where the manifest names the spec (a missing spec file is reported there). */
  referencedAt: Location;
  /** URL prefixes remote `$ref`s may start with. */
  allowRemoteRefs: readonly string[];
  diagnostics: Diagnostics;
  /** The spec file's bytes when they were read already (by the build cache, ./cache.ts). */
  bytes?: Buffer;
  /** Told of every file a `$ref` reads (by its real path) and every remote document fetched, for the build cache's key. */
  onRead?: (read: { file: string; bytes: Buffer } | { url: string }) => void;
};

/** Loads, validates and bundles an OpenAPI description; `undefined` when it cannot be used. */
export async function loadSpec(opts: LoadSpecOptions): Promise<LoadedSpec | undefined> {
  const { file, displayPath, diagnostics } = opts;
  const at: Location = { file: displayPath, pointer: '', line: 1, col: 1 };
  let text: string;
  try {
    text = (opts.bytes ?? (await readRegularFile(file))).toString('utf8');
  } catch (e) {
    diagnostics.error(
      'MCPGEN_SPEC_NOT_FOUND',
      `cannot read OpenAPI file ${displayPath}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`,
      'check the `openapi` path in the manifest; it is relative to the manifest file, and must name a regular file',
      opts.referencedAt,
    );
    return undefined;
  }
  const source = parseYamlSource({ file: displayPath, text, diagnostics, syntaxCode: 'MCPGEN_SPEC_SYNTAX' });
  if (!source) return undefined;
  const doc = source.value;
  if (!isObject(doc)) {
    diagnostics.error('MCPGEN_SPEC_INVALID', 'the OpenAPI document is not an object', 'the file must hold one OpenAPI or Swagger document', at);
    return undefined;
  }
  const version = detectVersion(doc);
  if (!version) {
    const found = doc.openapi ?? doc.swagger;
    diagnostics.error(
      'MCPGEN_SPEC_UNSUPPORTED_VERSION',
      found === undefined ? 'no `openapi` or `swagger` version field' : `unsupported version ${JSON.stringify(found)}`,
      'mcpgen reads Swagger 2.0 (`swagger: "2.0"`), OpenAPI 3.0.x and OpenAPI 3.1.x',
      source.locate(doc.openapi !== undefined ? '/openapi' : doc.swagger !== undefined ? '/swagger' : ''),
    );
    return undefined;
  }
  // one walk tells what the checks below need; they walk again only to report what it found
  const scan = scanDocument(doc);
  // a hostile nesting depth would overflow the checks below: nothing else is read then
  if (scan.tooDeep) {
    checkDepth({ doc, source, diagnostics });
    return undefined;
  }
  // independent checks all run, so one run reports every problem; nothing after them sees a broken document
  const errorsBefore = diagnostics.items.length;
  const nonFinite = scan.nonFinite ? checkFiniteNumbers({ doc, source, diagnostics }) : new Set<string>();
  // the deepest value is one level below the deepest container
  checkSchema(doc, version, source, diagnostics, scan.maxDepth + 1);
  // on the document as written: bundling turns a cycle of bare $refs into self-references
  const cycles = checkRefCycles({ doc, source, diagnostics, refs: scan.refs });
  // a single-file document whose `$ref`s all resolve directly needs no bundling: bundling would
  // return it unchanged (it edits the document in place), after an expensive crawl
  const unchanged = internalOnly(doc, scan);
  const bundled = unchanged ? doc : await bundle(doc, opts, source);
  // an unchanged document was checked above already
  if (bundled && !unchanged) {
    checkFiniteNumbers({ doc: bundled, source, diagnostics, skip: nonFinite });
    // cycles through other files show only once they are bundled in
    if (cycles === 0) checkRefCycles({ doc: bundled, source, diagnostics });
  }
  if (!bundled || diagnostics.items.slice(errorsBefore).some((d) => d.severity === 'error')) return undefined;
  return { version, document: bundled, source, ...(unchanged ? {} : { bundled: true as const }) };
}

/**
 * Reads a file that must be a regular file: a FIFO would block the read forever and a device
 * such as /dev/zero never end, so anything else is refused before it is opened.
 */
export async function readRegularFile(file: string): Promise<Buffer> {
  const st = await stat(file);
  if (!st.isFile())
    throw Object.assign(new Error('not a regular file'), { code: st.isDirectory() ? 'a folder, not a file' : 'not a regular file (a FIFO, socket or device)' });
  return readFile(file);
}

/** The real path of a directory, or the path itself when it does not exist. */
function realDir(dir: string): string {
  try {
    return realpathSync(dir);
  } catch {
    return path.resolve(dir);
  }
}

function detectVersion(doc: Record<string, unknown>): SpecVersion | undefined {
  if (doc.swagger === '2.0') return '2.0';
  if (typeof doc.openapi === 'string') {
    if (/^3\.0\.\d+$/.test(doc.openapi)) return '3.0';
    if (/^3\.1\.\d+$/.test(doc.openapi)) return '3.1';
  }
  return undefined;
}

const MAX_SCHEMA_ISSUES = 50;
/** Levels of the document the meta-schema check reads (its validator recurses per level). */
const META_SCHEMA_DEPTH = 300;

/** Validates the raw root document against the OpenAPI meta-schema; every issue points into the file. */
function checkSchema(doc: Record<string, unknown>, version: SpecVersion, source: YamlSource, diagnostics: Diagnostics, maxDepth: number): boolean {
  // a `$ref` object stands for what it references (validated where that is defined); the
  // published 3.1 meta-schema does not even allow `$ref` on a Path Item, which 3.1 does
  const isRef = (p: string) => {
    const node = lookupPointer(doc, p);
    return isObject(node) && typeof node.$ref === 'string';
  };
  // the validator reads the document itself (it changes nothing) unless it is deep enough to need cutting
  const input = maxDepth < META_SCHEMA_DEPTH ? doc : (shallowCopy(doc, META_SCHEMA_DEPTH) as Record<string, unknown>);
  const issues = metaSchemaIssues(input, version).filter((i) => !isRef(i.pointer) && !isRef(i.pointer.slice(0, i.pointer.lastIndexOf('/'))));
  for (const i of issues.slice(0, MAX_SCHEMA_ISSUES)) {
    diagnostics.error(
      'MCPGEN_SPEC_INVALID',
      i.message,
      'fix the document so that it validates against the OpenAPI schema',
      source.locate(i.pointer, { key: i.key === true }),
    );
  }
  if (issues.length > MAX_SCHEMA_ISSUES) {
    diagnostics.error(
      'MCPGEN_SPEC_INVALID',
      `…and ${issues.length - MAX_SCHEMA_ISSUES} more schema problems`,
      'fix the ones above and run again',
      source.locate(''),
    );
  }
  return issues.length === 0;
}

function lookupPointer(doc: unknown, ptr: string): unknown {
  let cur = doc;
  for (const t of parsePointer(ptr)) {
    if (Array.isArray(cur)) cur = cur[Number(t)];
    else if (isObject(cur)) cur = cur[t];
    else return undefined;
  }
  return cur;
}

/** OpenAPI versions swagger-parser accepts (others make `bundle` fail, which is reported). */
const PARSER_VERSIONS = ['3.1.0', '3.1.1', '3.1.2', '3.0.0', '3.0.1', '3.0.2', '3.0.3', '3.0.4'];
/** A `$ref` that swagger-parser's URL handling (percent-decoding, whitespace) leaves exactly as written. */
const PLAIN_INTERNAL_REF = /^#(?:\/[^\s%#\\\u0000-\u001f\u007f]*)*$/;

/**
 * Whether `SwaggerParser.bundle` would leave the document exactly as it is and report nothing:
 * the document passes swagger-parser's own version checks, nothing declares a `$id` (which would
 * rebase references), and every `$ref` is an internal JSON pointer to an existing object reached
 * without passing through, or ending at, another `$ref` (bundling rewrites those). Anything else,
 * including every error case, goes through `bundle` as before.
 */
export function internalOnly(doc: Record<string, unknown>, scan: Pick<DocumentScan, 'hasId' | 'refs'>): boolean {
  if (doc.swagger !== undefined) {
    if (doc.swagger !== '2.0') return false;
  } else if (doc.paths === undefined || typeof doc.openapi !== 'string' || !PARSER_VERSIONS.includes(doc.openapi)) {
    return false;
  }
  if (isObject(doc.info) && typeof doc.info.version === 'number') return false;
  if (scan.hasId) return false;
  const isRef = (v: unknown) => isObject(v) && typeof v.$ref === 'string' && v.$ref.length > 0;
  for (const ref of scan.refs) if (!PLAIN_INTERNAL_REF.test(ref)) return false;
  for (const ref of scan.refs) {
    let cur: unknown = doc;
    for (const t of parsePointer(ref.slice(1))) {
      if (isRef(cur)) return false;
      if (Array.isArray(cur)) {
        if (!/^(?:0|[1-9]\d*)$/.test(t)) return false;
        cur = cur[Number(t)];
      } else if (isObject(cur) && Object.hasOwn(cur, t)) {
        cur = cur[t];
      } else {
        return false;
      }
    }
    if (cur === null || typeof cur !== 'object' || isRef(cur)) return false;
  }
  return true;
}

/** Bundles external references into the document, enforcing the reference policy. */
async function bundle(doc: Record<string, unknown>, opts: LoadSpecOptions, source: YamlSource): Promise<Record<string, unknown> | undefined> {
  const { diagnostics, rootDirs, allowRemoteRefs } = opts;
  const refusals: string[] = [];
  // compared as written and by real path, so a link inside the folders cannot lead out of them
  const lexicalRoots = rootDirs.map((d) => path.resolve(d) + path.sep);
  const roots = rootDirs.map((d) => realDir(d) + path.sep);
  const rootFile = realDir(opts.file);
  const inside = (p: string, list: readonly string[]) => list.some((root) => (p + path.sep).startsWith(root));
  // paths in messages as the user sees them: relative to where the spec is shown from
  const specDir = path.dirname(path.resolve(opts.file));
  const shownDir = path.posix.dirname(opts.displayPath);
  const display = (abs: string) => path.posix.normalize(path.posix.join(shownDir, path.relative(specDir, abs).split(path.sep).join('/')));
  const options = {
    continueOnError: true,
    resolve: {
      external: true,
      file: {
        order: 1,
        canRead: (f: { url: string }) => !/^https?:/i.test(f.url),
        read: async (f: { url: string }) => {
          const p = f.url.startsWith('file:') ? new URL(f.url).pathname : f.url;
          const abs = path.resolve(decodeURIComponent(p));
          // refused before it is touched: whether it exists is none of the spec's business
          if (!inside(abs, lexicalRoots) && abs !== path.resolve(opts.file)) {
            refusals.push(`outside:${abs}`);
            throw new Error(`refused: ${display(abs)} is outside the directories of the manifest and the spec`);
          }
          let real: string;
          try {
            real = realpathSync(abs);
          } catch (e) {
            refusals.push(
              `unreadable:${abs}\0${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'does not exist' : `cannot be read (${(e as NodeJS.ErrnoException).code ?? String(e)})`}`,
            );
            throw e;
          }
          if (!inside(real, roots) && real !== rootFile) {
            refusals.push(`outside:${abs}`);
            throw new Error(`refused: ${display(abs)} is outside the directories of the manifest and the spec`);
          }
          try {
            const bytes = await readRegularFile(real);
            opts.onRead?.({ file: real, bytes });
            return bytes;
          } catch (e) {
            refusals.push(`unreadable:${abs}\0is ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
            throw e;
          }
        },
      },
      http: {
        order: 2,
        canRead: /^https?:/i,
        read: async (f: { url: string }) => {
          if (!allowRemoteRefs.some((prefix) => f.url.startsWith(prefix))) {
            refusals.push(`remote:${f.url}`);
            throw new Error(`refused remote reference ${f.url}`);
          }
          const res = await fetch(f.url, { signal: AbortSignal.timeout(20_000), redirect: 'error' });
          if (!res.ok) throw new Error(`HTTP ${res.status} fetching ${f.url}`);
          opts.onRead?.({ url: f.url });
          return Buffer.from(await res.arrayBuffer());
        },
      },
    },
  };
  try {
    // loaded only for a document that needs bundling
    const { default: SwaggerParser } = await import('@apidevtools/swagger-parser');
    const out = await SwaggerParser.bundle(opts.file, doc as never, options as never);
    return out as unknown as Record<string, unknown>;
  } catch (e) {
    const errors = ((e as { errors?: Array<{ message: string; path?: Array<string | number>; source?: string }> }).errors ?? [e as Error]) as Array<{
      message: string;
      path?: Array<string | number>;
    }>;
    for (const err of errors) {
      const ptr = Array.isArray(err.path) ? pointer(err.path) : '';
      const loc = source.locate(ptr);
      const msg = (err.message.split('\n')[0] ?? '').split(specDir + path.sep).join(shownDir === '.' ? '' : `${shownDir}/`);
      const raw = err.message;
      const remote = refusals.find((r) => r.startsWith('remote:') && raw.includes(r.slice(7)));
      const outside = refusals.find((r) => r.startsWith('outside:') && raw.includes(r.slice(8)));
      const unreadable = refusals.find((r) => r.startsWith('unreadable:') && raw.includes(r.slice(11, r.indexOf('\0'))));
      if (remote) {
        diagnostics.error(
          'MCPGEN_SPEC_REMOTE_REF',
          `remote $ref to ${remote.slice(7)} refused`,
          'add the URL prefix to `allowRemoteRefs` in the manifest, or vendor the file locally',
          loc,
        );
      } else if (outside) {
        diagnostics.error(
          'MCPGEN_SPEC_REF_OUTSIDE',
          `$ref to ${display(outside.slice(8))} refused: it is outside the directories of the manifest and the spec`,
          'keep every referenced file inside the directory of the manifest or of the spec',
          loc,
        );
      } else if (unreadable) {
        diagnostics.error(
          'MCPGEN_SPEC_REF_UNRESOLVED',
          `cannot resolve $ref: ${display(unreadable.slice(11, unreadable.indexOf('\0')))} ${unreadable.slice(unreadable.indexOf('\0') + 1)}`,
          'point the $ref at an existing regular file',
          loc,
        );
      } else {
        diagnostics.error(
          'MCPGEN_SPEC_REF_UNRESOLVED',
          `cannot resolve $ref: ${msg}`,
          'fix the $ref so that it points at an existing file and JSON pointer',
          loc,
        );
      }
    }
    return undefined;
  }
}
