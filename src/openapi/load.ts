/**
 * Stage 1 (load) for the OpenAPI side: read the spec, check its version and its schema, and
 * bundle multi-file descriptions into one document whose `$ref`s are all internal (`#/...`).
 *
 * Nothing is dereferenced here: circular schemas stay as `$ref`s and are turned into `$defs`
 * by the schema converter. Remote `$ref`s are refused unless the manifest allows their prefix;
 * local files outside the manifest's directory tree are refused too (a spec is untrusted input
 * and must not read arbitrary files into the generated project).
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import SwaggerParser from '@apidevtools/swagger-parser';
import { Diagnostics, parsePointer, pointer, type Location } from '../diagnostics.js';
import { isObject } from '../json.js';
import { parseYamlSource, type YamlSource } from '../manifest/source.js';

/** Which OpenAPI generation a document belongs to. */
export type SpecVersion = '2.0' | '3.0' | '3.1';

/** A loaded, bundled OpenAPI document. */
export type LoadedSpec = {
  version: SpecVersion;
  /** The bundled document: every `$ref` is internal (`#/...`). */
  document: Record<string, unknown>;
  /** The root file as parsed, for locating diagnostics. */
  source: YamlSource;
};

type AjvIssue = { instancePath: string; message?: string; keyword: string; params?: Record<string, unknown> };

const require = createRequire(import.meta.url);
// swagger-parser's own validator (the OpenAPI 2.0/3.0/3.1 meta-schemas with its Ajv set-up);
// it has no public entry point, so it is loaded by file.
const validateSchema = require('@apidevtools/swagger-parser/lib/validators/schema.js') as (api: unknown) => void;

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
};

/** Loads, validates and bundles an OpenAPI description; `undefined` when it cannot be used. */
export async function loadSpec(opts: LoadSpecOptions): Promise<LoadedSpec | undefined> {
  const { file, displayPath, diagnostics } = opts;
  const at: Location = { file: displayPath, pointer: '', line: 1, col: 1 };
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    diagnostics.error(
      'MCPGEN_SPEC_NOT_FOUND',
      `cannot read OpenAPI file ${displayPath}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`,
      'check the `openapi` path in the manifest; it is relative to the manifest file',
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
  if (!checkSchema(doc, source, diagnostics)) return undefined;
  const bundled = await bundle(doc, opts, source);
  if (!bundled) return undefined;
  return { version, document: bundled, source };
}

function detectVersion(doc: Record<string, unknown>): SpecVersion | undefined {
  if (doc.swagger === '2.0') return '2.0';
  if (typeof doc.openapi === 'string') {
    if (/^3\.0\.\d+$/.test(doc.openapi)) return '3.0';
    if (/^3\.1\.\d+$/.test(doc.openapi)) return '3.1';
  }
  return undefined;
}

const MAX_SCHEMA_ISSUES = 25;

/** Validates the raw root document against the OpenAPI meta-schema; issues point into the file. */
function checkSchema(doc: Record<string, unknown>, source: YamlSource, diagnostics: Diagnostics): boolean {
  try {
    validateSchema(structuredClone(doc));
    return true;
  } catch (e) {
    // a `$ref` object stands for what it references (validated where that is defined); the
    // published 3.1 meta-schema does not even allow `$ref` on a Path Item, which 3.1 does
    const isRef = (p: string) => {
      const node = lookupPointer(doc, p);
      return isObject(node) && typeof node.$ref === 'string';
    };
    const issues = ((e as { details?: AjvIssue[] }).details ?? []).filter((i) => i.keyword !== 'oneOf' && i.keyword !== 'anyOf' && !isRef(i.instancePath));
    if (issues.length === 0 && ((e as { details?: AjvIssue[] }).details ?? []).length > 0) return true;
    // The meta-schemas are full of oneOf branches; report the deepest issue per location only.
    const byPath = new Map<string, AjvIssue>();
    for (const i of issues) if (!byPath.has(i.instancePath)) byPath.set(i.instancePath, i);
    const paths = [...byPath.keys()].filter((p) => ![...byPath.keys()].some((q) => q !== p && q.startsWith(p + '/')));
    if (paths.length === 0) {
      diagnostics.error('MCPGEN_SPEC_INVALID', `invalid OpenAPI document: ${(e as Error).message.split('\n')[0]}`, 'fix the document so that it validates against the OpenAPI schema', source.locate(''));
      return false;
    }
    for (const p of paths.slice(0, MAX_SCHEMA_ISSUES)) {
      const i = byPath.get(p)!;
      const extra = i.params && 'additionalProperty' in i.params ? ` (${JSON.stringify(i.params.additionalProperty)})` : '';
      diagnostics.error(
        'MCPGEN_SPEC_INVALID',
        `${p || '/'} ${i.message ?? 'is invalid'}${extra}`,
        'fix the document so that it validates against the OpenAPI schema',
        source.locate(p),
      );
    }
    if (paths.length > MAX_SCHEMA_ISSUES) {
      diagnostics.error('MCPGEN_SPEC_INVALID', `…and ${paths.length - MAX_SCHEMA_ISSUES} more schema problems`, 'fix the ones above and run again', source.locate(''));
    }
    return false;
  }
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

/** Bundles external references into the document, enforcing the reference policy. */
async function bundle(doc: Record<string, unknown>, opts: LoadSpecOptions, source: YamlSource): Promise<Record<string, unknown> | undefined> {
  const { diagnostics, rootDirs, allowRemoteRefs } = opts;
  const refusals: string[] = [];
  const roots = rootDirs.map((d) => path.resolve(d) + path.sep);
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
          if (!roots.some((root) => (abs + path.sep).startsWith(root)) && abs !== path.resolve(opts.file)) {
            refusals.push(`outside:${abs}`);
            throw new Error(`refused: ${path.relative(process.cwd(), abs)} is outside the directories of the manifest and the spec`);
          }
          return readFile(abs);
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
          return Buffer.from(await res.arrayBuffer());
        },
      },
    },
  };
  try {
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
      const msg = err.message.split('\n')[0] ?? '';
      const remote = refusals.find((r) => r.startsWith('remote:') && msg.includes(r.slice(7)));
      const outside = refusals.find((r) => r.startsWith('outside:') && msg.includes(r.slice(8)));
      if (remote) {
        diagnostics.error('MCPGEN_SPEC_REMOTE_REF', `remote $ref to ${remote.slice(7)} refused`, 'add the URL prefix to `allowRemoteRefs` in the manifest, or vendor the file locally', loc);
      } else if (outside) {
        const rel = path.relative(process.cwd(), outside.slice(8)).split(path.sep).join('/');
        diagnostics.error('MCPGEN_SPEC_REF_OUTSIDE', `$ref to ${rel} refused: it is outside the directories of the manifest and the spec`, 'keep every referenced file inside the directory of the manifest or of the spec', loc);
      } else {
        diagnostics.error('MCPGEN_SPEC_REF_UNRESOLVED', `cannot resolve $ref: ${msg}`, 'fix the $ref so that it points at an existing file and JSON pointer', loc);
      }
    }
    return undefined;
  }
}
