/**
 * The files that make a generated project ready to ship: `.env.example`, the Dockerfile and
 * `.dockerignore`, the Claude Code project config `.mcp.json`, the MCP Bundle manifest
 * (`manifest.json`, packed by `@anthropic-ai/mcpb`) and `.mcpbignore`, and the client
 * configurations the README shows. Every variable they name comes from the runtime's own
 * registry (templates/runtime/process/variables.ts), so they list exactly what the server reads.
 *
 * JSON files are printed from objects with a fixed key order; line-based files are handlebars
 * templates (`noEscape` + `strict`) fed only text that went through `lineText`.
 */
import type Handlebars from 'handlebars';
import type { Variable } from '../../../templates/runtime/process/variables.js';
import { SERVE_DEFAULTS, settingNames } from '../../../templates/runtime/process/variables.js';
import { handlebarsRuntime, projectTemplates } from '../../core/lazy.js';
import type { IrSecurityScheme, IrServer } from '../../ir/types.js';
import { HASH_HEADER } from '../header.js';
import { lineText } from '../safe.js';
import { irVariables } from '../ts/entry.js';
import { credentialPlan } from './credentials.js';

/** Version of `@anthropic-ai/mcpb` the README's packing command runs (the one mcpgen's tests pack with). */
export const MCPB_VERSION = '2.1.2';

/** MCP Bundle manifest version written (supported by `mcpb` 2.x and Claude Desktop). */
export const MCPB_MANIFEST_VERSION = '0.3';

/** The compiled server, relative to the project. */
export const ENTRY_POINT = 'dist/server.js';

const json = (v: unknown) => JSON.stringify(v, null, 2) + '\n';

const templates = new Map<string, Handlebars.TemplateDelegate>();

function render(name: string, data: unknown): string {
  let t = templates.get(name);
  if (!t) {
    t = handlebarsRuntime().create().template(projectTemplates()[name]!);
    templates.set(name, t);
  }
  return t(data);
}

/**
 * The variables a client configuration must set: credentials, hidden arguments, and settings
 * without a usable default. Of credentials that are alternatives to one another, only those of
 * the asked alternative (`alternativeOnly` leaves the others out; see credentials.ts).
 */
export function clientVariables(variables: readonly Variable[], alternativeOnly: ReadonlySet<string> = new Set()): Variable[] {
  return variables.filter((v) => (v.kind !== 'setting' || v.required) && !alternativeOnly.has(v.name));
}

/** `user_config` key / VS Code input id of a variable: its name in lower case. */
export function configKey(v: Variable): string {
  return v.name.toLowerCase();
}

/** A placeholder value for a variable in a client configuration the user edits. */
function placeholder(v: Variable): string {
  if (v.type === 'url') return 'https://api.example.com';
  return v.secret ? '<secret>' : '<value>';
}

/** Where a server started with `--transport http` and the default port and host serves MCP. */
export function httpUrl(): string {
  return `http://${SERVE_DEFAULTS.host}:${SERVE_DEFAULTS.port}/mcp`;
}

/** A scheme whose credential each MCP client sends over HTTP, with the header it goes in. */
type ClientHeaderScheme = { scheme: IrSecurityScheme; header: string };

/** The schemes with `fromClient`, in IR order. */
export function clientHeaderSchemes(ir: IrServer): ClientHeaderScheme[] {
  return ir.securitySchemes.flatMap((s) => (s.kind !== 'oauth2ClientCredentials' && s.fromClient !== undefined ? [{ scheme: s, header: s.fromClient }] : []));
}

/** Placeholder of a `fromClient` header's value. */
function headerPlaceholder({ scheme, header }: ClientHeaderScheme): string {
  if (scheme.kind === 'basic') return '<user>:<password>';
  if (scheme.kind === 'bearer') return header.toLowerCase() === 'authorization' ? 'Bearer <API token>' : '<API token>';
  return '<API key>';
}

/**
 * The headers an HTTP client configuration sends, as `[name, value(placeholder)]`: the MCP
 * client token (needed when the server has `<envPrefix>_HTTP_TOKENS`), unless a scheme takes the
 * `Authorization` header for itself, then each `fromClient` header.
 */
function httpHeaders(ir: IrServer, value: (name: string, placeholder: string, secretId: string) => string): Array<[string, string]> {
  const own = clientHeaderSchemes(ir);
  const token: Array<[string, string]> = own.some((h) => h.header.toLowerCase() === 'authorization')
    ? []
    : [['Authorization', value('Authorization', 'Bearer <token>', 'mcp_token')]];
  return [...token, ...own.map((h): [string, string] => [h.header, value(h.header, headerPlaceholder(h), h.header.toLowerCase().replace(/[^a-z0-9]+/g, '_'))])];
}

/** The headers an HTTP client sends, with placeholder values (`claude mcp add --header`, the Inspector's `--header`). */
export function httpHeaderPlaceholders(ir: IrServer): Array<[string, string]> {
  return httpHeaders(ir, (_n, placeholder) => placeholder);
}

/** How each client is configured, as objects (README snippets and `.mcp.json`): over stdio, and over HTTP. */
export function clientConfigs(ir: IrServer): {
  claudeDesktop: unknown;
  claudeCode: unknown;
  claudeCodeAdd: { name: string; env: string[]; command: string[] };
  vscode: unknown;
  cursor: unknown;
  docker: unknown;
  http: {
    url: string;
    /** `claude mcp add` arguments for the HTTP server. */
    claudeCodeAdd: string[];
    claudeCode: unknown;
    vscode: unknown;
    cursor: unknown;
  };
} {
  const vars = clientVariables(irVariables(ir), credentialPlan(ir).alternativeOnly);
  const absolute = `/absolute/path/to/${ir.name}/${ENTRY_POINT}`;
  const env = (value: (v: Variable) => string) => (vars.length > 0 ? { env: Object.fromEntries(vars.map((v) => [v.name, value(v)])) } : {});
  const inputs = vars.map((v) => ({ type: 'promptString', id: configKey(v), description: v.description, password: v.secret }));
  const url = httpUrl();
  const plain = Object.fromEntries(httpHeaders(ir, (_n, placeholder) => placeholder));
  const httpInputs: Array<Record<string, unknown>> = [];
  const vscodeHeaders = Object.fromEntries(
    httpHeaders(ir, (name, placeholder, id) => {
      httpInputs.push({
        type: 'promptString',
        id,
        description:
          name === 'Authorization' && id === 'mcp_token' ? `Token of this client in ${settingNames(ir.envPrefix).httpTokens}` : `Value of the ${name} header`,
        password: true,
      });
      return placeholder.replace(/<[^>]+>(:<[^>]+>)?/, `\${input:${id}}`);
    }),
  );
  return {
    claudeDesktop: { mcpServers: { [ir.name]: { command: 'node', args: [absolute], ...env(placeholder) } } },
    // Claude Code expands ${VAR} (an unset one without default is an error) and ${VAR:-default}
    claudeCode: {
      mcpServers: { [ir.name]: { type: 'stdio', command: 'node', args: [ENTRY_POINT], ...env((v) => (v.required ? `\${${v.name}}` : `\${${v.name}:-}`)) } },
    },
    claudeCodeAdd: { name: ir.name, env: vars.map((v) => `${v.name}=...`), command: ['node', absolute] },
    vscode: {
      ...(inputs.length > 0 ? { inputs } : {}),
      servers: { [ir.name]: { type: 'stdio', command: 'node', args: [`\${workspaceFolder}/${ENTRY_POINT}`], ...env((v) => `\${input:${configKey(v)}}`) } },
    },
    cursor: { mcpServers: { [ir.name]: { command: 'node', args: [`\${workspaceFolder}/${ENTRY_POINT}`], ...env((v) => `\${env:${v.name}}`) } } },
    docker: {
      mcpServers: { [ir.name]: { command: 'docker', args: ['run', '-i', '--rm', ...vars.flatMap((v) => ['-e', v.name]), ir.name], ...env(placeholder) } },
    },
    http: {
      url,
      // `--header <header...>` is variadic: before the name it would swallow the name and the URL
      claudeCodeAdd: ['claude', 'mcp', 'add', '--transport', 'http', ir.name, url, ...Object.entries(plain).flatMap(([h, v]) => ['--header', `${h}: ${v}`])],
      claudeCode: { mcpServers: { [ir.name]: { type: 'http', url, headers: plain } } },
      vscode: { inputs: httpInputs, servers: { [ir.name]: { type: 'http', url, headers: vscodeHeaders } } },
      cursor: { mcpServers: { [ir.name]: { url, headers: plain } } },
    },
  };
}

/** Renders `.mcp.json`: this project as a Claude Code project-scoped server, secrets taken from the environment. */
export function emitMcpJson(ir: IrServer): string {
  return json(clientConfigs(ir).claudeCode);
}

/**
 * Renders `.env.example`: every variable the server reads, required ones active, the others
 * commented out with their default. Credentials that are alternatives to one another: those of
 * the asked alternative active ("required unless …"), the others commented out ("instead of …").
 */
export function emitEnvExample(ir: IrServer): string {
  const plan = credentialPlan(ir);
  // variable ⇒ the variables of the other alternatives of each choice it is part of
  const others = new Map<string, string[][]>();
  for (const c of plan.choices) {
    c.alternatives.forEach((a, i) => {
      // what the others take instead: without the variables they share with this one
      const rest = c.alternatives
        .filter((_, j) => j !== i)
        .map((o) => o.variables.filter((x) => !a.variables.includes(x)))
        .filter((r) => r.length > 0);
      for (const v of a.variables) others.set(v, [...(others.get(v) ?? []), ...rest]);
    });
  }
  const either = (groups: string[][]) => {
    const distinct = [...new Set(groups.map((g) => g.join(' and ')))];
    return `${distinct.join(' or ')} ${distinct.length > 1 || groups.some((g) => g.length > 1) ? 'are' : 'is'}`;
  };
  const variables = irVariables(ir).map((v) => {
    const only = v.transport === 'http' ? 'HTTP only' : v.transport === 'stdio' ? 'stdio only' : '';
    const alt = v.kind === 'credential' && !v.required ? others.get(v.name) : undefined;
    const asked = alt !== undefined && plan.asked.has(v.name);
    const need =
      alt !== undefined && alt.length > 0
        ? asked
          ? `Required unless ${either(alt)} set instead`
          : `Optional: set instead of ${either(alt).replace(/ (is|are)$/, '')}`
        : v.required
          ? v.transport === 'stdio'
            ? 'Required over stdio'
            : 'Required'
          : 'Optional';
    const active = v.required || asked;
    const notes = [need, active ? '' : only, v.secret ? 'secret' : '', v.default !== undefined ? `default: ${lineText(v.default)}` : ''].filter(Boolean);
    return {
      description: lineText(v.description),
      notes: notes.join(', '),
      line: active ? `${v.name}=` : `# ${v.name}=${v.default !== undefined ? lineText(v.default) : ''}`,
    };
  });
  return HASH_HEADER + render('env.example.hbs', { name: ir.name, variables, alternatives: plan.choices.length > 0 });
}

/**
 * Renders the Dockerfile: a multi-stage Node 20 build, the server run as the unprivileged `node`
 * user, over stdio unless started with `--transport http` (it then listens on every interface of
 * the container: `<envPrefix>_HOST=0.0.0.0`, port {@link SERVE_DEFAULTS}.port exposed).
 */
export function emitDockerfile(ir: IrServer): string {
  const names = settingNames(ir.envPrefix);
  return (
    HASH_HEADER +
    render('Dockerfile.hbs', {
      name: ir.name,
      entry: ENTRY_POINT,
      reflection: ir.reflection !== undefined,
      reflectionDir: names.reflectionDir,
      hostVar: names.host,
      allowedHosts: names.allowedHosts,
      tokens: names.httpTokens,
      drainVar: names.drainMs,
      port: SERVE_DEFAULTS.port,
    })
  );
}

/** Renders `.dockerignore`. */
export function emitDockerignore(): string {
  return HASH_HEADER + ['node_modules', 'dist', '.git', '.env', '.env.*', '!.env.example', '*.mcpb', ''].join('\n');
}

/** Renders `.mcpbignore`: what an MCP Bundle leaves out (sources, container and client files, secrets). */
export function emitMcpbignore(): string {
  return HASH_HEADER + ['src/', 'tsconfig.json', 'Dockerfile', '.dockerignore', '.mcp.json', '.mcpgen.json', '.env', '.env.*', '*.mcpb', ''].join('\n');
}

/**
 * Renders `manifest.json`, the MCP Bundle manifest: the built server run by the host's Node,
 * one `user_config` entry per credential, hidden-argument variable and base URL (required when
 * the server has no default; secrets `sensitive`), each passed to the server's environment.
 */
export function emitBundleManifest(ir: IrServer): string {
  const all = irVariables(ir);
  const baseUrl = all.find((v) => v.kind === 'setting' && v.type === 'url');
  const uploadRoot = all.find((v) => v.kind === 'setting' && v.name === `${ir.envPrefix}_UPLOAD_ROOT`);
  const configured = [...(baseUrl ? [baseUrl] : []), ...all.filter((v) => v.kind !== 'setting'), ...(uploadRoot ? [uploadRoot] : [])];
  const userConfig: Record<string, unknown> = {};
  const env: Record<string, string> = {};
  for (const v of configured) {
    const entry: Record<string, unknown> = {
      type: v.type === 'path' ? 'directory' : 'string',
      title: v.name,
      description: v.description,
      required: v.required,
    };
    if (v.secret) entry.sensitive = true;
    // an optional value left empty must still replace its ${user_config.…}: the server reads blank as unset
    if (!v.required) entry.default = v.type === 'path' || v.default === undefined ? '' : v.default;
    userConfig[configKey(v)] = entry;
    env[v.name] = `\${user_config.${configKey(v)}}`;
  }
  // the host's working directory is no place for justifications: keep them in the user's home
  const reflectionDir = all.find((v) => v.name === `${ir.envPrefix}_REFLECTION_DIR`);
  if (reflectionDir) env[reflectionDir.name] = `\${HOME}/.${ir.name}/justifications`;
  const pkg = ir.package;
  const manifest: Record<string, unknown> = {
    manifest_version: MCPB_MANIFEST_VERSION,
    name: ir.name,
    version: ir.version,
    description: ir.description ?? defaultDescription(ir),
    author: { name: pkg?.author ?? ir.name },
  };
  if (pkg?.repository !== undefined) manifest.repository = { type: 'git', url: pkg.repository };
  if (pkg?.license !== undefined) manifest.license = pkg.license;
  manifest.server = {
    type: 'node',
    entry_point: ENTRY_POINT,
    mcp_config: { command: 'node', args: [`\${__dirname}/${ENTRY_POINT}`], ...(Object.keys(env).length > 0 ? { env } : {}) },
  };
  const tools = [...ir.tools, ...ir.extraTools].map((t) => ({
    name: t.name,
    ...((t.title ?? t.description) ? { description: t.title ?? t.description } : {}),
  }));
  if (tools.length > 0) manifest.tools = tools;
  if (Object.keys(userConfig).length > 0) manifest.user_config = userConfig;
  manifest.compatibility = { platforms: ['darwin', 'win32', 'linux'], runtimes: { node: '>=20.19.0' } };
  return json(manifest);
}

/** The package description when the manifest gives none. */
export function defaultDescription(ir: IrServer): string {
  return `MCP server for ${ir.name}, generated by mcpgen`;
}
