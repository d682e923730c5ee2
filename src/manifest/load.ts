/**
 * Stage 1 (load) for the manifest: read mcpgen.yaml, parse it with positions, validate it
 * against the schema, and resolve defaults and paths.
 */
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Diagnostics } from '../core/diagnostics.js';
import { parseYamlSource, type YamlSource } from '../source/source.js';
import { isRecord, manifestSchema } from './schema.js';
import type {
  ArgumentRule,
  AuthScheme,
  Concern,
  ConcernMapping,
  ExtraTool,
  Manifest,
  Override,
  Policy,
  Preprocessor,
  Prompt,
  Reflection,
  Resource,
  ResourceTemplate,
  Selector,
} from './types.gen.js';

/** The manifest's `uploads` settings. */
export type Uploads = NonNullable<Manifest['uploads']>;

import { validateManifest } from './validate.js';

/** A manifest as read from disk. */
export type LoadedManifest = {
  source: YamlSource;
  /**
   * The parsed manifest. Only trustworthy when `valid`; otherwise it is whatever the file held
   * (an empty object when that was not a mapping), and readers must check types themselves.
   */
  manifest: Manifest;
  /** True when the manifest passed schema validation. */
  valid: boolean;
  /** Absolute directory of the manifest file; relative paths in the manifest start here. */
  dir: string;
  /** Manifest path relative to the working directory, with `/` separators (used in diagnostics). */
  displayPath: string;
};

/** A manifest with the schema's defaults applied and its paths made absolute. */
export type ResolvedManifest = {
  name: string;
  version: string;
  description?: string;
  /** How the project is published (`package`), `private` defaulted to false. */
  package: ResolvedPackage;
  /** `openapi` as written. */
  openapi: string;
  /** Absolute path of the OpenAPI description. */
  openapiPath: string;
  /** `output` as written (or its default). */
  output: string;
  /** Absolute output directory. */
  outputDir: string;
  baseUrl?: string;
  envPrefix: string;
  allowRemoteRefs: string[];
  maxToolNameLength: number;
  maxDescriptionLength: number;
  timeoutMs: number;
  maxResponseBytes: number;
  /** Most bytes of response bodies the server holds at once (default 64 MiB). */
  maxInFlightBytes: number;
  /** How output schemas are published (default `lenient`). */
  outputSchemas: 'lenient' | 'strict' | 'none';
  outputSchemaDepth: number;
  outputSchemaMaxBytes: number;
  inputSchemaMaxBytes: number;
  maxArgumentDescriptionLength: number;
  /** How tool results are made to fit (`results`, every key defaulted). */
  results: ResolvedResults;
  /** `results.presets`: concern preset name ⇒ the result settings it changes, as written (values of the wrong type dropped). */
  resultPresets?: Record<string, ResultPresetSettings>;
  /** Limits on the published surface (`maxListBytes` defaulted). */
  budget: {
    maxListBytes: number;
    maxTools?: number;
    maxTokens?: number;
    presets?: Record<string, { maxListBytes?: number; maxTools?: number; maxTokens?: number }>;
  };
  /** Selectors as written (a field may be one value or a list), so diagnostics can point at them. */
  include?: Selector[];
  exclude?: Selector[];
  overrides?: Record<string, Override>;
  /** `arguments` (argument rules) as written (entries that are not objects dropped). */
  argumentRules?: ArgumentRule[];
  /** Environment variable names per security scheme, as written (entries that are not objects dropped). */
  auth?: Record<string, AuthScheme>;
  /** `http.auth`: defaults of the OAuth resource server, as written. */
  httpAuth?: { issuer?: string; audience?: string; scopes?: string[] };
  /** `scopeMap`: API scope ⇒ the MCP scope(s) it becomes, as written (entries neither a string nor a list of strings dropped). */
  scopeMap?: Record<string, string | string[]>;
  /** `entry`: `custom` ⇒ the project is a library and src/main.ts registers primitives in code; absent ⇒ `generated`. */
  entry?: 'custom';
  /** `deploy`: `compose` ⇒ the build writes compose.yaml (three replicas, Redis, a reverse proxy); absent ⇒ none. */
  deploy?: 'compose';
  uploads?: Uploads;
  /** Absolute directory of the manifest (`file` resources are read relative to it). */
  dir: string;
  /** Custom primitives as written (entries that are not objects dropped). */
  extraTools?: ExtraTool[];
  prompts?: Prompt[];
  resources?: Resource[];
  resourceTemplates?: ResourceTemplate[];
  /** Concern declarations, mappings per primitive kind and presets, as written. */
  concerns?: Concern[];
  concernMappings?: Partial<Record<ConcernKind, Record<string, ConcernMapping>>>;
  concernPresets?: Record<string, Record<string, string>>;
  exposeInMeta: boolean;
  enforce: boolean;
  /** How clients find the tools (default `list`). */
  /** The mode when no concern preset is selected (`discovery`, or `discovery.mode`). */
  discovery: 'list' | 'search' | 'code';
  /** `discovery.presets`: concern preset name ⇒ its mode, as written. */
  discoveryPresets?: Record<string, 'list' | 'search' | 'code'>;
  /** Preprocessors as written (entries that are not objects dropped). */
  preprocessors?: Preprocessor[];
  /** The reflection gate settings as written. */
  reflection?: Reflection;
  /** The policy layer (audit, access, limits) as written. */
  policy?: Policy;
};

/** The manifest's `results`, with the schema's defaults applied. */
export type ResolvedResults = { maxTokens: number; compact: boolean; omit: string[]; maxStringChars: number; projection: boolean };

/** The result settings one concern preset changes (`results.presets.<preset>`). */
export type ResultPresetSettings = Partial<Pick<ResolvedResults, 'maxTokens' | 'compact' | 'omit' | 'maxStringChars'>>;

/** The manifest's `package` settings, resolved. */
export type ResolvedPackage = {
  private: boolean;
  author?: string;
  license?: string;
  repository?: string;
  /** Package name ⇒ version range merged into the generated package.json (handlers' libraries). */
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
};

/** The primitive kinds `concernMappings` has a table for. */
export type ConcernKind = 'tools' | 'prompts' | 'resources' | 'resourceTemplates';

/** Options of {@link loadManifest}. */
export type LoadManifestOptions = {
  /** Directory `path` and display paths are relative to; defaults to `process.cwd()`. */
  cwd?: string;
};

/**
 * Reads, parses and validates a manifest. Returns undefined when the file cannot be read or is
 * not well-formed YAML; schema problems are reported and give `valid: false`.
 */
export async function loadManifest(manifestPath: string, diagnostics: Diagnostics, opts: LoadManifestOptions = {}): Promise<LoadedManifest | undefined> {
  const cwd = path.resolve(opts.cwd ?? process.cwd());
  const abs = path.resolve(cwd, manifestPath);
  const displayPath = toDisplayPath(cwd, abs);
  let text: string;
  try {
    // a FIFO would block the read forever, a device never end it: regular files only
    const st = await stat(abs);
    if (!st.isFile() && !st.isDirectory()) throw Object.assign(new Error('not a regular file'), { code: 'not a regular file (a FIFO, socket or device)' });
    text = await readFile(abs, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const at = { file: displayPath, pointer: '', line: 0, col: 0 };
    if (code === 'ENOENT') {
      diagnostics.error('MCPGEN_MANIFEST_NOT_FOUND', `manifest ${displayPath} not found`, 'check the path; the manifest is usually named mcpgen.yaml', at);
    } else if (code === 'EISDIR') {
      diagnostics.error(
        'MCPGEN_MANIFEST_NOT_FOUND',
        `${displayPath} is a directory, not a manifest file`,
        'pass the manifest file itself, e.g. `mcpgen build mcpgen.yaml`',
        at,
      );
    } else {
      diagnostics.error(
        'MCPGEN_MANIFEST_NOT_FOUND',
        `cannot read manifest ${displayPath}: ${code ?? String(e)}`,
        'check that the file exists and is readable',
        at,
      );
    }
    return undefined;
  }
  const source = parseYamlSource({ file: displayPath, text, diagnostics, syntaxCode: 'MCPGEN_MANIFEST_SYNTAX' });
  if (!source) return undefined;
  const valid = validateManifest(source, diagnostics);
  const manifest = (isRecord(source.value) ? source.value : {}) as Manifest;
  return { source, manifest, valid, dir: path.dirname(abs), displayPath };
}

/** `abs` relative to `cwd` with `/` separators (absolute when there is no relative path). */
export function toDisplayPath(cwd: string, abs: string): string {
  const rel = path.relative(cwd, abs);
  if (rel === '' || path.isAbsolute(rel)) return abs.split(path.sep).join('/');
  return rel.split(path.sep).join('/');
}

/**
 * The default `envPrefix` for a server name: upper-cased, every character outside `[A-Z0-9]`
 * replaced by `_`, and `MCP_` in front when it would not start with a letter (`MCP` for an
 * empty name).
 *
 * @example
 * deriveEnvPrefix('pet-store.v2'); // 'PET_STORE_V2'
 * deriveEnvPrefix('123abc');       // 'MCP_123ABC'
 */
export function deriveEnvPrefix(name: string): string {
  const prefix = name.toUpperCase().replace(/[^A-Z0-9]/g, '_');
  if (prefix === '') return 'MCP';
  return /^[A-Z]/.test(prefix) ? prefix : `MCP_${prefix}`;
}

/** The schema's `default` of a top-level manifest property. */
function schemaDefault<T>(key: string, check: (v: unknown) => v is T): T {
  const props = manifestSchema().properties;
  const value = isRecord(props) && isRecord(props[key]) ? props[key].default : undefined;
  if (!check(value)) throw new Error(`schemas/manifest.schema.json: no usable default for "${key}"`);
  return value;
}

const isString = (v: unknown): v is string => typeof v === 'string';
const isInteger = (v: unknown): v is number => Number.isInteger(v);

function resolveBudget(raw: unknown): ResolvedManifest['budget'] {
  const b: Record<string, unknown> = isRecord(raw) ? raw : {};
  const props = manifestSchema().properties;
  const budgetSchema = isRecord(props) && isRecord(props.budget) && isRecord(props.budget.properties) ? props.budget.properties : {};
  const budgetDefault = isRecord(budgetSchema.maxListBytes) && isInteger(budgetSchema.maxListBytes.default) ? budgetSchema.maxListBytes.default : 10_485_760;
  const out: ResolvedManifest['budget'] = { maxListBytes: isInteger(b.maxListBytes) ? b.maxListBytes : budgetDefault };
  if (isInteger(b.maxTools)) out.maxTools = b.maxTools;
  if (isInteger(b.maxTokens)) out.maxTokens = b.maxTokens;
  if (isRecord(b.presets)) {
    const presets: NonNullable<ResolvedManifest['budget']['presets']> = {};
    for (const [name, raw] of Object.entries(b.presets)) {
      if (!isRecord(raw)) continue;
      const limits: (typeof presets)[string] = {};
      for (const key of ['maxListBytes', 'maxTools', 'maxTokens'] as const) if (isInteger(raw[key])) limits[key] = raw[key];
      Object.defineProperty(presets, name, { value: limits, enumerable: true, writable: true, configurable: true });
    }
    out.presets = presets;
  }
  return out;
}

/** `results` as written over the schema's defaults; values of the wrong type count as absent. */
export function resolveResults(raw: unknown): ResolvedResults {
  const r: Record<string, unknown> = isRecord(raw) ? raw : {};
  const props = manifestSchema().properties;
  const schema = isRecord(props) && isRecord(props.results) && isRecord(props.results.properties) ? props.results.properties : {};
  const pick = <T>(key: keyof ResolvedResults, check: (v: unknown) => v is T): T => {
    if (check(r[key])) return r[key];
    const d = isRecord(schema[key]) ? schema[key].default : undefined;
    if (!check(d)) throw new Error(`schemas/manifest.schema.json: no usable default for "results.${key}"`);
    return d;
  };
  const isBoolean = (v: unknown): v is boolean => typeof v === 'boolean';
  const isStrings = (v: unknown): v is string[] => Array.isArray(v) && v.every(isString);
  return {
    maxTokens: pick('maxTokens', isInteger),
    compact: pick('compact', isBoolean),
    omit: [...pick('omit', isStrings)],
    maxStringChars: pick('maxStringChars', isInteger),
    projection: pick('projection', isBoolean),
  };
}

/** `results.presets` as written, keys of the wrong type dropped (names are checked against concernPresets in the IR). */
export function resolveResultPresets(raw: unknown): Record<string, ResultPresetSettings> | undefined {
  if (!isRecord(raw) || !isRecord(raw.presets)) return undefined;
  const out: Record<string, ResultPresetSettings> = {};
  for (const [name, p] of Object.entries(raw.presets)) {
    if (!isRecord(p)) continue;
    const settings: ResultPresetSettings = {};
    if (isInteger(p.maxTokens)) settings.maxTokens = p.maxTokens;
    if (typeof p.compact === 'boolean') settings.compact = p.compact;
    if (Array.isArray(p.omit) && p.omit.every(isString)) settings.omit = [...p.omit];
    if (isInteger(p.maxStringChars)) settings.maxStringChars = p.maxStringChars;
    Object.defineProperty(out, name, { value: settings, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

function resolvePackage(raw: unknown): ResolvedPackage {
  const p: Record<string, unknown> = isRecord(raw) ? raw : {};
  const out: ResolvedPackage = { private: p.private === true };
  for (const key of ['author', 'license', 'repository'] as const) {
    const v = p[key];
    if (isString(v)) out[key] = v;
  }
  for (const key of ['dependencies', 'devDependencies'] as const) {
    const v = p[key];
    // fromEntries: a name is always a key of its own, never a prototype
    if (isRecord(v)) out[key] = Object.fromEntries(Object.entries(v).filter((e): e is [string, string] => isString(e[1])));
  }
  return out;
}

/** The mode of `discovery` when no preset is selected: the string form, or the object form's `mode`. */
function discoveryMode(raw: unknown): 'list' | 'search' | 'code' {
  const mode = isRecord(raw) ? raw.mode : raw;
  return mode === 'search' || mode === 'code' ? mode : 'list';
}

/**
 * Applies the schema's defaults (version, output, maxToolNameLength, timeoutMs,
 * maxResponseBytes; envPrefix derived from name), resolves `openapi` and `output` against the
 * manifest directory. Fields of the wrong type (an
 * invalid manifest) are treated as absent, so this never throws on user input.
 */
export function resolveManifest(loaded: LoadedManifest): ResolvedManifest {
  const m: Record<string, unknown> = isRecord(loaded.manifest) ? loaded.manifest : {};
  const str = (k: string) => (isString(m[k]) ? m[k] : undefined);
  const int = (k: string) => (isInteger(m[k]) ? m[k] : undefined);
  const name = str('name') ?? '';
  const openapi = str('openapi') ?? '';
  const output = str('output') ?? schemaDefault('output', isString);
  const out: ResolvedManifest = {
    name,
    version: str('version') ?? schemaDefault('version', isString),
    openapi,
    openapiPath: path.resolve(loaded.dir, openapi),
    output,
    outputDir: path.resolve(loaded.dir, output),
    envPrefix: str('envPrefix') ?? deriveEnvPrefix(name),
    allowRemoteRefs: Array.isArray(m.allowRemoteRefs) ? m.allowRemoteRefs.filter(isString) : [],
    maxToolNameLength: int('maxToolNameLength') ?? schemaDefault('maxToolNameLength', isInteger),
    maxDescriptionLength: int('maxDescriptionLength') ?? schemaDefault('maxDescriptionLength', isInteger),
    timeoutMs: int('timeoutMs') ?? schemaDefault('timeoutMs', isInteger),
    maxResponseBytes: int('maxResponseBytes') ?? schemaDefault('maxResponseBytes', isInteger),
    maxInFlightBytes: int('maxInFlightBytes') ?? schemaDefault('maxInFlightBytes', isInteger),
    outputSchemas: m.outputSchemas === 'strict' || m.outputSchemas === 'none' ? m.outputSchemas : 'lenient',
    outputSchemaDepth: int('outputSchemaDepth') ?? schemaDefault('outputSchemaDepth', isInteger),
    outputSchemaMaxBytes: int('outputSchemaMaxBytes') ?? schemaDefault('outputSchemaMaxBytes', isInteger),
    inputSchemaMaxBytes: int('inputSchemaMaxBytes') ?? schemaDefault('inputSchemaMaxBytes', isInteger),
    maxArgumentDescriptionLength: int('maxArgumentDescriptionLength') ?? schemaDefault('maxArgumentDescriptionLength', isInteger),
    budget: resolveBudget(m.budget),
    results: resolveResults(m.results),
    package: resolvePackage(m.package),
    dir: loaded.dir,
    exposeInMeta: m.exposeInMeta === true,
    enforce: m.enforce === true,
    discovery: discoveryMode(m.discovery),
  };
  // the object form's per-preset modes (names are checked against concernPresets in the IR)
  if (isRecord(m.discovery) && isRecord(m.discovery.presets)) {
    const modes: Record<string, 'list' | 'search' | 'code'> = {};
    for (const [name, mode] of Object.entries(m.discovery.presets)) {
      if (mode === 'list' || mode === 'search' || mode === 'code')
        Object.defineProperty(modes, name, { value: mode, enumerable: true, writable: true, configurable: true });
    }
    out.discoveryPresets = modes;
  }
  if (m.entry === 'custom') out.entry = 'custom';
  if (m.deploy === 'compose') out.deploy = 'compose';
  const resultPresets = resolveResultPresets(m.results);
  if (resultPresets !== undefined) out.resultPresets = resultPresets;
  const description = str('description');
  if (description !== undefined) out.description = description;
  const baseUrl = str('baseUrl');
  if (baseUrl !== undefined) out.baseUrl = baseUrl;
  if (Array.isArray(m.include)) out.include = m.include.filter(isRecord) as Selector[];
  if (Array.isArray(m.exclude)) out.exclude = m.exclude.filter(isRecord) as Selector[];
  if (isRecord(m.overrides)) {
    out.overrides = Object.fromEntries(Object.entries(m.overrides).filter(([, v]) => isRecord(v))) as Record<string, Override>;
  }
  if (Array.isArray(m.arguments)) out.argumentRules = m.arguments.filter(isRecord) as ArgumentRule[];
  if (isRecord(m.uploads)) out.uploads = m.uploads as Uploads;
  if (isRecord(m.auth)) {
    out.auth = Object.fromEntries(Object.entries(m.auth).filter(([, v]) => isRecord(v))) as Record<string, AuthScheme>;
  }
  if (isRecord(m.http) && isRecord(m.http.auth)) {
    const a = m.http.auth;
    out.httpAuth = {
      ...(typeof a.issuer === 'string' ? { issuer: a.issuer } : {}),
      ...(typeof a.audience === 'string' ? { audience: a.audience } : {}),
      ...(Array.isArray(a.scopes) ? { scopes: a.scopes.filter((s): s is string => typeof s === 'string') } : {}),
    };
  }
  if (isRecord(m.scopeMap)) {
    out.scopeMap = Object.fromEntries(
      Object.entries(m.scopeMap).filter(([, v]) => typeof v === 'string' || (Array.isArray(v) && v.every((x) => typeof x === 'string'))),
    ) as Record<string, string | string[]>;
  }
  const records = <T>(k: string): T[] | undefined => (Array.isArray(m[k]) ? (m[k].filter(isRecord) as T[]) : undefined);
  const extraTools = records<ExtraTool>('extraTools');
  if (extraTools) out.extraTools = extraTools;
  const prompts = records<Prompt>('prompts');
  if (prompts) out.prompts = prompts;
  const resources = records<Resource>('resources');
  if (resources) out.resources = resources;
  const resourceTemplates = records<ResourceTemplate>('resourceTemplates');
  if (resourceTemplates) out.resourceTemplates = resourceTemplates;
  const concerns = records<Concern>('concerns');
  if (concerns) out.concerns = concerns;
  if (isRecord(m.concernMappings)) out.concernMappings = m.concernMappings as NonNullable<ResolvedManifest['concernMappings']>;
  if (isRecord(m.concernPresets)) out.concernPresets = m.concernPresets as NonNullable<ResolvedManifest['concernPresets']>;
  const preprocessors = records<Preprocessor>('preprocessors');
  if (preprocessors) out.preprocessors = preprocessors;
  if (isRecord(m.reflection)) out.reflection = m.reflection as Reflection;
  if (isRecord(m.policy)) out.policy = m.policy as Policy;
  return out;
}
