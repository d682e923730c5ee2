/**
 * The starter manifest `mcpgen init` writes: YAML text with comments, from the spec's `info`,
 * tags and security schemes and from the model of the full spec (tool names, methods, the
 * measured tool surface). Every value that comes from the spec is written as a double-quoted
 * YAML scalar by the `yaml` library, and spec text in comments is flattened to one line, so
 * nothing in a spec can add keys or lines to the manifest.
 */
import { Scalar, stringify } from 'yaml';
import { DEFAULT_LIMITS } from '../../ir/surface/fit.js';
import { reservedVariables } from '../../ir/tools/security.js';
import type { SelectorInput } from '../../ir/tools/select.js';
import type { HttpMethod, IrSecurityScheme, IrServer } from '../../ir/types.js';

/** What {@link starterManifest} is made from. */
export type StarterInput = {
  /** Server name (already a legal manifest `name`). */
  name: string;
  /** Manifest `version` (already semver) and, when it had to be changed, the spec's `info.version`. */
  version: string;
  specVersionText?: string;
  /** `info.title`, for the heading comment. */
  title?: string;
  description?: string;
  /** The spec path as the manifest writes it: relative to the manifest, `/` separators. */
  openapi: string;
  /** The OpenAPI generation, for the heading comment (`2.0`, `3.0`, `3.1`). */
  specVersion: string;
  /** The model of the full spec (every operation included, default settings). */
  ir: IrServer;
  /** Every security scheme the spec defines, in the spec's order (used ones are in `ir.securitySchemes`). */
  definedSchemes: string[];
  /** Where editors find mcpgen's manifest schema: a path relative to the manifest. */
  schema: string;
  /** Default `budget.maxListBytes`, to say how the full surface compares. */
  maxListBytes: number;
  /**
   * The slice `init --tag/--exclude-tag/--method` selected (then `ir` models only it): its
   * selectors, written as `include`/`exclude`; the flags as given; the spec's operation count.
   */
  slice?: { include?: SelectorInput[]; exclude?: SelectorInput[]; flags: string; specOperations: number };
};

/** Methods that leave the API's data as it is. */
const READ_METHODS: ReadonlySet<HttpMethod> = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE']);

/** `value` as a double-quoted YAML scalar on one line (line and paragraph separators escaped too). */
export function quoted(value: string): string {
  const s = new Scalar(value);
  s.type = 'QUOTE_DOUBLE';
  // lineWidth 0 and no multi-line double quotes: `\n` stays an escape, never a folded line
  const text = stringify(s, { lineWidth: 0, doubleQuotedMinMultiLineLength: Number.POSITIVE_INFINITY })
    .trimEnd()
    .replace(/[\u0085\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  if (/[\r\n]/.test(text)) throw new Error(`mcpgen: a quoted value spans lines: ${JSON.stringify(text)}`);
  return text;
}

/** Spec text for a comment: one line, no control characters, cut to `max` characters. */
export function commentText(value: string, max = 100): string {
  // eslint-disable-next-line no-control-regex
  const flat = value
    .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return flat.length > max ? `${flat.slice(0, max - 1).trimEnd()}…` : flat;
}

const num = (n: number) => n.toLocaleString('en-US');
/** `14.2 kB`, `1.68 MB` (decimal units, as the README gives sizes). */
const size = (bytes: number) => (bytes >= 1e6 ? `${(bytes / 1e6).toFixed(2)} MB` : `${(bytes / 1e3).toFixed(1)} kB`);
const plural = (n: number, word: string) => `${num(n)} ${word}${n === 1 ? '' : 's'}`;

/** The manifest text. */
export function starterManifest(input: StarterInput): string {
  const { ir } = input;
  const lines: string[] = [];
  const out = (...l: string[]) => lines.push(...l);
  out(`# yaml-language-server: $schema=${input.schema}`);
  out(`# Starter manifest written by \`mcpgen init\` from ${input.title ? `"${commentText(input.title)}" (` : '('}OpenAPI ${input.specVersion}).`);
  out('# Every key is described in docs/manifest.md of mcpgen; `mcpgen validate` checks this file,');
  out('# `mcpgen build` generates the server project into `output`.');
  out('');
  out(`name: ${quoted(input.name)}   # npm package, bin and serverInfo name`);
  out(
    `version: ${quoted(input.version)}${input.specVersionText !== undefined ? `   # the spec's info.version is "${commentText(input.specVersionText, 40)}", not semver` : ''}`,
  );
  if (input.description !== undefined) out(`description: ${quoted(input.description)}`);
  else out('# description: "What the server is for"   # sent to clients as `instructions`');
  out(`openapi: ${quoted(input.openapi)}`);
  out('output: "./server"');
  if (ir.baseUrl !== undefined) out(`# baseUrl: ${quoted(ir.baseUrl)}   # the spec's server; set another here or ${ir.envPrefix}_BASE_URL at run time`);
  else out(`# baseUrl: "https://api.example.com"   # the spec names no absolute server URL: set the API's here, or ${ir.envPrefix}_BASE_URL at run time`);
  out(`# envPrefix: ${ir.envPrefix}   # default from name: the server reads ${ir.envPrefix}_BASE_URL, ${ir.envPrefix}_TIMEOUT_MS, …`);
  out('');
  surfaceSection(input, out);
  out('');
  authSection(input, out);
  out('');
  argumentsSection(ir, out);
  out('');
  concernsSection(ir, out);
  return lines.join('\n') + '\n';
}

/** The size of the full spec's tool surface, and the tags (or path prefixes) to trim it by. */
function surfaceSection(input: StarterInput, out: (...l: string[]) => void): void {
  const { ir } = input;
  const s = ir.surface;
  const tools = s ? s.tools.length : ir.tools.length;
  const slice = input.slice;
  if (slice)
    out(
      `# Tool surface of the slice \`mcpgen init ${commentText(slice.flags, 300)}\` selected (${num(tools)} of the spec's ${plural(slice.specOperations, 'operation')}), with the settings below:`,
    );
  else out('# Tool surface of the whole spec, with the settings below:');
  if (s) {
    out(`#   ${plural(tools, 'tool')}; tools/list is ${num(s.listBytes)} bytes (${size(s.listBytes)}), ${num(s.withOutputSchema)} with an output schema.`);
    if (s.listBytes > input.maxListBytes)
      out(`#   That is over budget.maxListBytes (${num(input.maxListBytes)}, what clients read in one message): the build fails until you trim.`);
    else if (s.listBytes > input.maxListBytes / 4) out(`#   That is over a quarter of budget.maxListBytes (${num(input.maxListBytes)}): the build warns.`);
    // the one warning a build of the starter gives of itself: said here, with its two remedies
    const dropped = s.outputSchemasDropped.length;
    if (dropped > 0) {
      out(
        `#   ${num(dropped)} of them publish no output schema: ${dropped === 1 ? 'its is' : 'theirs are'} larger than outputSchemaMaxBytes (${num(DEFAULT_LIMITS.maxOutputBytes)}),`,
      );
      out('#   so `mcpgen build` warns (MCPGEN_OUTPUT_SCHEMA_DROPPED; its help names the value that keeps them');
      out('#   all). Their results still come back as text. Raise `outputSchemaMaxBytes`, or acknowledge it:');
      out('# diagnostics: { MCPGEN_OUTPUT_SCHEMA_DROPPED: off }');
    }
  } else out(`#   ${plural(tools, 'tool')}.`);
  out("# A client sends every tool's name, description and schemas to the model in each session;");
  out('# fewer, smaller tools leave it more room and choose better. Keep what your users need:');
  if (slice) {
    out('# The slice is the `include`/`exclude` below (docs/manifest.md, "Selectors"); edit them to change it.');
    selectorsYaml(slice, out);
  } else out('# uncomment `include` and the entries to keep (`exclude` takes the same selectors and wins).');
  const bytes = new Map((s?.tools ?? []).map((t) => [t.name, t.bytes]));
  const groups = new Map<string, { count: number; bytes: number }>();
  let untagged = 0;
  const add = (key: string, toolName: string) => {
    const g = groups.get(key) ?? { count: 0, bytes: 0 };
    g.count++;
    g.bytes += bytes.get(toolName) ?? 0;
    groups.set(key, g);
  };
  for (const t of ir.tools) {
    if (t.tags.length === 0) untagged++;
    for (const tag of new Set(t.tags)) add(tag, t.name);
  }
  const byTag = groups.size > 0;
  if (!byTag) {
    // no tags at all: offer the first path segment instead
    for (const t of ir.tools) add(`/${t.path.split('/').filter((p) => p !== '')[0] ?? ''}`, t.name);
  }
  const keys = [...groups.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const entries = keys.map((k) => (byTag ? `tag: ${quoted(k)}` : `path: ${quoted(k === '/' ? '/' : `${k}/**`)}`));
  const width = Math.min(48, Math.max(0, ...entries.map((e) => e.length)));
  out(slice ? `# The slice by ${byTag ? 'tag' : 'path'}: to narrow it, add one of these to \`exclude\`:` : '# include:');
  keys.forEach((k, i) => {
    const g = groups.get(k)!;
    const root = !byTag && k === '/' ? ' (the root path)' : '';
    out(`#   - ${entries[i]!.padEnd(width)}   # ${plural(g.count, 'operation')}${s ? `, ${num(g.bytes)} bytes` : ''}${root}`);
  });
  if (byTag && untagged > 0) out(`#   # ${plural(untagged, 'operation')} without a tag: select them by path, e.g. - path: "/things/**"`);
  const first = ir.tools[0];
  if (first) {
    if (!slice?.exclude) {
      out('# exclude:');
      out('#   - deprecated: true');
      out('#   - method: [delete]');
    }
    out('# overrides:                      # by operationId or "METHOD /path"');
    out(`#   ${quoted(first.operationId ?? `${first.method} ${first.path}`)}:`);
    out('#     description: "What the model should know about this tool."');
  }
}

/** The slice's `include` and `exclude`, every value a quoted scalar. */
function selectorsYaml(slice: NonNullable<StarterInput['slice']>, out: (...l: string[]) => void): void {
  const list = (v: string | string[] | undefined) => (v === undefined ? [] : Array.isArray(v) ? v : [v]);
  for (const key of ['include', 'exclude'] as const) {
    const selectors = slice[key];
    if (!selectors) continue;
    out(`${key}:`);
    for (const sel of selectors) {
      const fields = (['tag', 'method'] as const).filter((f) => sel[f] !== undefined);
      fields.forEach((f, i) => out(`  ${i === 0 ? '-' : ' '} ${f}: [${list(sel[f]).map(quoted).join(', ')}]`));
    }
  }
}

/** One `auth` entry per scheme the operations use, with the variables the server reads. */
function authSection(input: StarterInput, out: (...l: string[]) => void): void {
  const used = new Map(input.ir.securitySchemes.map((s) => [s.name, s]));
  if (input.definedSchemes.length === 0) {
    out('# auth: the spec defines no security schemes.');
    return;
  }
  out('# Credentials: the server reads each secret from the environment variable named here at');
  out('# start-up (names only: never put a secret in this file). Rename a variable if you like.');
  const entries: Array<[string, string]> = [];
  const unused: string[] = [];
  for (const name of input.definedSchemes) {
    const s = used.get(name);
    if (!s) unused.push(name);
    else entries.push([`  ${quoted(name)}: ${authValue(s)}`, describeScheme(s)]);
  }
  if (entries.length > 0) {
    out('auth:');
    const width = Math.min(72, Math.max(...entries.map(([e]) => e.length)));
    for (const [e, note] of entries) out(`${e.padEnd(width)}   # ${note}`);
  } else out("# auth: no operation uses the spec's security schemes.");
  for (const name of unused)
    out(`# ${quoted(name)}: defined by the spec but used by no operation${input.slice ? ' in the slice' : ''}; the server reads nothing for it.`);
}

function authValue(s: IrSecurityScheme): string {
  switch (s.kind) {
    case 'apiKey':
      return `{ env: ${quoted(s.env.apiKey)} }`;
    case 'bearer':
      return `{ env: ${quoted(s.env.token)} }`;
    case 'basic':
      return `{ username: ${quoted(s.env.username)}, password: ${quoted(s.env.password)} }`;
    case 'oauth2ClientCredentials':
      return `{ clientId: ${quoted(s.env.clientId)}, clientSecret: ${quoted(s.env.clientSecret)} }`;
  }
}

function describeScheme(s: IrSecurityScheme): string {
  switch (s.kind) {
    case 'apiKey':
      return `API key in ${s.in} "${commentText(s.paramName, 40)}"`;
    case 'bearer':
      return s.fallbackFrom ? `${commentText(s.fallbackFrom, 60)}: sent as a static bearer token` : 'bearer token';
    case 'basic':
      return 'HTTP basic';
    case 'oauth2ClientCredentials':
      return `OAuth 2.0 client credentials (token from ${commentText(s.tokenUrl, 60)})`;
  }
}

/** Parameter names that carry a credential, lower case without `-` and `_`. */
const CREDENTIAL_NAMES: ReadonlySet<string> = new Set([
  'token',
  'accesstoken',
  'authtoken',
  'apitoken',
  'bearertoken',
  'sessiontoken',
  'apikey',
  'xapikey',
  'xauthtoken',
  'xaccesstoken',
  'authorization',
  'secret',
  'clientsecret',
]);

/**
 * The argument rules the starter proposes: one hiding each parameter named like a credential
 * (`token`, `api_key`, …) that is on most of `ir`'s operations, filled from `<PREFIX>_<NAME>`
 * (a variable no scheme or setting uses). `mcpgen init` models the starter with them, so the
 * surface it states is the one the starter builds.
 */
export function proposeArgumentRules(ir: IrServer): Array<{ name: string; hidden: true; env: string }> {
  const counts = new Map<string, number>();
  for (const t of ir.tools) {
    for (const arg of new Set(t.params.filter((p) => CREDENTIAL_NAMES.has(p.name.toLowerCase().replace(/[-_]/g, ''))).map((p) => p.arg)))
      counts.set(arg, (counts.get(arg) ?? 0) + 1);
  }
  const taken = new Set([...reservedVariables(ir.envPrefix), ...ir.securitySchemes.flatMap((s) => Object.values(s.env))]);
  return [...counts]
    .filter(([, n]) => n * 2 > ir.tools.length)
    .map(([arg]) => arg)
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
    .map((name) => {
      const stem = `${ir.envPrefix}_${name
        .toUpperCase()
        .replace(/[^A-Z0-9]+/g, '_')
        .replace(/^_+|_+$/g, '')}`;
      let env = stem;
      for (let i = 2; taken.has(env); i++) env = `${stem}_${i}`;
      taken.add(env);
      return { name, hidden: true as const, env };
    });
}

/** The proposed argument rules (see {@link proposeArgumentRules}), as `ir` applied them. */
function argumentsSection(ir: IrServer, out: (...l: string[]) => void): void {
  const rules = ir.argumentRules ?? [];
  if (rules.length === 0) {
    out('# arguments: rules that hide, fill, rename or default an argument on every tool that has it');
    out('# (docs/manifest.md, "Argument rules"); no parameter named like a credential is on most operations.');
    return;
  }
  out('# Arguments named like a credential on most operations: these rules hide them from the model on');
  out("# every tool that has them, and the server sends the environment variable's value instead");
  out('# (docs/manifest.md, "Argument rules"). Set the variable where the server runs; delete a rule to');
  out('# let the model send the argument itself.');
  out('arguments:');
  for (const r of rules) {
    out(`  - name: ${quoted(r.name)}   # on ${num(r.tools.length)} of ${plural(ir.tools.length, 'operation')}`);
    out('    hidden: true');
    out(`    env: ${quoted(r.fill !== undefined && r.fill !== 'value' ? r.fill.env : '')}`);
  }
}

/** A suggested `access` concern, read or write by method, with a mapping for every tool. */
function concernsSection(ir: IrServer, out: (...l: string[]) => void): void {
  if (ir.tools.length === 0) {
    out('# concerns: the spec has no operations to map.');
    return;
  }
  const reads = ir.tools.filter((t) => READ_METHODS.has(t.method)).length;
  out('# Concerns let a client narrow the tools it sees, e.g. to those that only read (docs/manifest.md,');
  out(`# "Concerns"). Suggested from the methods: ${num(reads)} read (GET, HEAD), ${num(ir.tools.length - reads)} write.`);
  out('# The mappings name every tool: after trimming with include/exclude, `mcpgen fix` removes the');
  out('# lines of the tools you left out (the build warns until then), or delete the whole block.');
  out('concerns:');
  out('  - name: access');
  out('    description: "What a call does to the API\'s data: read leaves it unchanged, write may change it."');
  out('    values: [read, write]');
  // a preset that would list nothing is left out
  if (reads > 0) {
    out('concernPresets:');
    out('  read-only: { access: read }');
  } else out('# concernPresets: none suggested, as no tool only reads.');
  out('concernMappings:');
  out('  tools:');
  for (const t of ir.tools) out(`    ${quoted(t.name)}: { access: ${READ_METHODS.has(t.method) ? 'read' : 'write'} }`);
}
