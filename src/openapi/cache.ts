/**
 * The build cache: a loaded, checked and bundled spec kept under `.cache/mcpgen/` beside the
 * manifest, so a rebuild after a change to the manifest, a handler or a template skips reading,
 * checking and bundling the spec.
 *
 * An entry is found by the spec's path (one slot per spec path and loading options, overwritten
 * by a new mcpgen) and trusted only when its key matches: a hash of the spec's bytes, mcpgen's
 * version and a fingerprint of its loading code, and the options that affect loading; every file
 * a `$ref` read is read again and must hash as it did; and the entry, header and body, must have
 * the length and hash its seal records (../core/cache-entry.ts: a partial, corrupted or altered
 * entry is a miss, and is overwritten). A spec that fetched a remote `$ref`, or that failed to
 * load, is not cached. Entries are written to a temporary file and renamed into place, so a
 * reader never sees half of one.
 *
 * What a hit gives is what the load gave: the same document (the spec's own text parsed again when
 * it was JSON and needed no bundling, else the bundled document as stored), the same diagnostics
 * (replayed through the run's levels), and a source that locates pointers in the spec's text,
 * parsing it only when something asks.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { LineCounter } from 'yaml';
import { readCacheEntry, sha256, writeCacheEntry } from '../core/cache-entry.js';
import { hashFiles, mayRun } from '../core/code-fingerprint.js';
import { type Diagnostic, Diagnostics, parsePointer } from '../core/diagnostics.js';
import { share, sharing } from '../core/json-sharing.js';
import { installedPackageJson, PACKAGE_ROOT } from '../core/paths.js';
import { JsonIndex } from '../source/json-index.js';
import { parseYamlSource, type YamlSource } from '../source/source.js';
import { type LoadedSpec, type LoadSpecOptions, loadSpec, readRegularFile, type SpecVersion } from './load.js';

/** Format of an entry; bumped when its layout changes. */
const FORMAT = 3;

export { cacheDir } from '../core/cache-dir.js';

/** Where the spec came from: the cache (`hit`), or a load whose result can be kept (`miss`) or cannot (`uncacheable`). */
export type CacheOutcome = 'hit' | 'miss' | 'uncacheable';

/** Entry header: the first line of an entry file. */
type Header = {
  format: number;
  key: string;
  version: SpecVersion;
  /** Files a `$ref` read: real path and sha256 of their bytes. */
  files: Array<{ file: string; sha256: string }>;
  diagnostics: Diagnostic[];
  /** `text`: the document is `JSON.parse` of the spec's text; `body`: it is the body after the header. */
  document: 'text' | 'body';
  /**
   * Where the document holds one object at several places (a bundled `$ref`, a YAML alias): each
   * later place's pointer tokens and the first place's. The model may tell objects apart by
   * identity, so the document is rebuilt with the same sharing, not as copies.
   */
  shared: Array<[string[], string[]]>;
  /** The spec's text was read as JSON (else by the YAML parser): how its source locates pointers. */
  json: boolean;
};

let fingerprintValue: string | undefined;

/**
 * mcpgen's version, and the content of every file the loading code is made of (this
 * folder's modules, the YAML/JSON source reader, the precompiled meta-schema checks) and the
 * versions of the parsers it uses: a new release, or an edited checkout, never reads an entry
 * written by other code.
 */
function fingerprint(): string {
  if (fingerprintValue !== undefined) return fingerprintValue;
  const here = path.dirname(fileURLToPath(import.meta.url));
  const files = [
    ...readdirSync(here)
      .filter(mayRun)
      .map((f) => path.join(here, f)),
    ...readdirSync(path.join(here, '..', 'source'))
      .filter(mayRun)
      .map((f) => path.join(here, '..', 'source', f)),
    // what load.ts imports from outside these folders
    ...readdirSync(path.join(here, '..', 'core'))
      .filter((f) => /^(diagnostics|json)\.(ts|js)$/.test(f))
      .map((f) => path.join(here, '..', 'core', f)),
    ...['2.0', '3.0', '3.1'].map((v) => path.join(PACKAGE_ROOT, 'generated', `openapi-${v}-check.cjs`)),
  ];
  const head = [readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8')];
  // the loaders' versions, wherever npm installed them (hoisted when mcpgen is a dependency)
  for (const pkg of ['@apidevtools/swagger-parser', '@apidevtools/json-schema-ref-parser', 'yaml']) head.push(installedPackageJson(pkg) ?? `${pkg}\0-`);
  return (fingerprintValue = hashFiles(head, files));
}

/** The options that change what loading gives, besides the bytes read and the loading code. */
function optionsKey(opts: LoadSpecOptions): string {
  return JSON.stringify({
    format: FORMAT,
    file: path.resolve(opts.file),
    display: opts.displayPath,
    rootDirs: opts.rootDirs.map((d) => path.resolve(d)),
    allowRemoteRefs: opts.allowRemoteRefs,
  });
}

/** Options of {@link loadSpecCached}. */
export type LoadSpecCachedOptions = LoadSpecOptions & {
  cacheDir: string;
  /**
   * Asked on a hit, once the entry is checked and before its document is parsed, with the spec's
   * content key: `true` leaves the document to be parsed when something first reads it (a build
   * whose model comes from the cache, ../ir/model-memo.ts, may never read it).
   */
  deferDocument?: (contentKey: string) => Promise<boolean>;
};

/** What {@link loadSpecCached} gives: the spec, whether the cache answered, and on a miss how to keep what was loaded. */
export type CachedLoad = {
  spec: LoadedSpec | undefined;
  outcome: CacheOutcome;
  /** Writes the entry (a miss only): called once the build has written its project, so a refused build, `--check` and `validate` write nothing. Resolves to whether it was written. */
  save?: () => Promise<boolean>;
  /**
   * A cacheable spec's content key (a hit or a miss): a sha256 of the entry's key (the spec's
   * bytes, mcpgen's loading code, the loading options) and of every file a `$ref` read. What the
   * build cache keeps that was computed from the loaded spec (../ir/model-memo.ts) is keyed by it.
   */
  contentKey?: string;
};

const contentKey = (key: string, files: Header['files']) => sha256(JSON.stringify([key, files]));

/**
 * {@link loadSpec} through the cache in `dir`. Reports exactly what `loadSpec` reports; `outcome`
 * says whether the cache answered. The entry of a miss is made ready here (before the model
 * reads the document) and written only by `save`.
 */
export async function loadSpecCached(opts: LoadSpecCachedOptions): Promise<CachedLoad> {
  let bytes: Buffer;
  try {
    bytes = opts.bytes ?? (await readRegularFile(opts.file));
  } catch {
    // loadSpec says why it cannot be read
    return { spec: await loadSpec(opts), outcome: 'uncacheable' };
  }
  const options = optionsKey(opts);
  // the slot leaves the code out, so a new mcpgen overwrites the old one's entry
  const slot = `spec-${sha256(options).slice(0, 32)}.entry`;
  const key = sha256(`${options}\0${fingerprint()}\0${sha256(bytes)}`);
  const hit = await readEntry(slot, key, bytes, opts);
  if (hit) return { spec: hit.spec, outcome: 'hit', contentKey: contentKey(key, hit.files) };

  // a miss: load as without a cache, in a Diagnostics of its own so the entry keeps every
  // diagnostic before the manifest's levels drop or promote any
  const scratch = new Diagnostics();
  const read: Array<{ file: string; bytes: Buffer }> = [];
  let remote = false;
  const spec = await loadSpec({
    ...opts,
    bytes,
    diagnostics: scratch,
    onRead: (r) => {
      if ('url' in r) remote = true;
      else read.push(r);
    },
  });
  for (const d of scratch.items) opts.diagnostics.add(d);
  if (!spec || remote) return { spec, outcome: 'uncacheable' };
  // one spec file read as JSON and used as it is: its text is the document (bundling edits the
  // parsed document in place, so a bundled one may be the same object and still not the text's)
  const asText = spec.source.json === true && spec.bundled !== true && spec.document === spec.source.value;
  const shared = asText ? [] : sharing(spec.document);
  if (shared === undefined) return { spec, outcome: 'uncacheable' };
  const body = asText ? '' : JSON.stringify(spec.document);
  const header: Header = {
    format: FORMAT,
    key,
    version: spec.version,
    files: read.map((r) => ({ file: r.file, sha256: sha256(r.bytes) })),
    diagnostics: scratch.items,
    document: asText ? 'text' : 'body',
    shared,
    json: spec.source.json === true,
  };
  return {
    spec,
    outcome: 'miss',
    save: () => writeCacheEntry(opts.cacheDir, slot, header, body),
    contentKey: contentKey(key, header.files),
  };
}

/** The entry in `slot` when it is whole and its key and referenced files match; `undefined` otherwise. */
async function readEntry(
  slot: string,
  key: string,
  bytes: Buffer,
  opts: LoadSpecCachedOptions,
): Promise<{ spec: LoadedSpec; files: Header['files'] } | undefined> {
  const entry = await readCacheEntry(opts.cacheDir, slot);
  if (!entry) return undefined;
  try {
    const header = entry.header as unknown as Header;
    if (header.format !== FORMAT || header.key !== key) return undefined;
    const body = entry.body;
    for (const f of header.files) {
      let now: Buffer;
      try {
        now = await readRegularFile(f.file);
      } catch {
        return undefined;
      }
      if (sha256(now) !== f.sha256) return undefined;
    }
    let text = bytes.toString('utf8');
    if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    // the spec's own text (read as JSON before, with the same bytes) or the body (its hash checked)
    const parse = (): Record<string, unknown> | undefined => {
      const document = JSON.parse(header.document === 'text' ? text : body) as unknown;
      if (document === null || typeof document !== 'object' || Array.isArray(document)) return undefined;
      return share(document, header.shared) ? (document as Record<string, unknown>) : undefined;
    };
    let document: Record<string, unknown> | undefined;
    if (!(await opts.deferDocument?.(contentKey(key, header.files)))) {
      document = parse();
      if (!document) return undefined;
    }
    const read = (): Record<string, unknown> => {
      // parsed before now, or never failing since: a whole entry written by this mcpgen parses
      document ??= parse();
      if (!document) throw new Error(`mcpgen: the build cache's entry of ${opts.displayPath} cannot be read; delete .cache/mcpgen/ or build with --no-cache`);
      return document;
    };
    for (const d of header.diagnostics) opts.diagnostics.add(d);
    const spec: LoadedSpec = {
      version: header.version,
      get document() {
        return read();
      },
      source: header.json ? jsonSource(opts.displayPath, text, read) : yamlSource(opts.displayPath, text, read),
    };
    return { spec, files: header.files };
  } catch {
    return undefined;
  }
}

/**
 * The source of a spec read as JSON, locating as source.ts's JSON source does (a lazy index of the
 * text and a line table, built on the first `locate`), without parsing the text again or looking
 * for duplicate keys (the load did: the text is the same).
 */
function jsonSource(file: string, text: string, value: () => unknown): YamlSource {
  let index: JsonIndex | undefined;
  let lines: LineCounter | undefined;
  return {
    file,
    text,
    get value() {
      return value();
    },
    json: true,
    locate(ptr, o) {
      const offset = (index ??= new JsonIndex(text)).find(parsePointer(ptr), o).offset;
      if (!lines) {
        lines = new LineCounter();
        lines.addNewLine(0);
        for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) lines.addNewLine(i + 1);
      }
      const p = lines.linePos(offset);
      return { file, pointer: ptr, ...(p.line === 0 ? { line: 1, col: offset + 1 } : { line: p.line, col: p.col }) };
    },
  };
}

/**
 * The source of a spec read as YAML: its `locate` parses the text on its first call, as the load
 * did (the spec's syntax was checked then; the text is the same, so nothing is reported).
 */
function yamlSource(file: string, text: string, value: () => unknown): YamlSource {
  let parsed: YamlSource | undefined;
  return {
    file,
    text,
    get value() {
      return value();
    },
    locate(ptr, o) {
      parsed ??= parseYamlSource({ file, text, diagnostics: new Diagnostics(), syntaxCode: 'MCPGEN_SPEC_SYNTAX' });
      return parsed ? parsed.locate(ptr, o) : { file, pointer: ptr, line: 1, col: 1 };
    },
  };
}
