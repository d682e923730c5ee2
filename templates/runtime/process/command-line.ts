/**
 * The server's command line. Without arguments the server serves MCP over stdio; `--transport
 * http` (with `--port`, `--host`) serves Streamable HTTP instead, the flags winning over
 * `<envPrefix>_TRANSPORT`, `_PORT` and `_HOST`. `--help`, `--version` and `--print-config`
 * answer on stdout and exit instead, and those are the only times the server writes anything
 * but protocol messages to stdout. An unknown argument is reported on stderr with exit code 2,
 * so a typo never starts a server that ignores it.
 *
 * `--print-config` lists every variable the server reads (variables.ts) with the value it would
 * use: what the environment sets, or the default. Secrets are masked; a malformed setting is
 * reported on stderr and makes the exit code 1.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { ServerConfig } from '../core/types.js';
import type { OAuthSettings } from './settings.js';
import {
  addTokens,
  parseAllowedHosts,
  parseAllowedOrigins,
  parseIdentity,
  parsePositiveInteger,
  read,
  resolveOAuthSettings,
  resolveSettings,
  SettingsError,
  tokenFileEntries,
  tokenListEntries,
} from './settings.js';
import type { Transport, Variable, VariableTool } from './variables.js';
import { SERVE_DEFAULTS, serverVariables, settingNames } from './variables.js';

/** An option that answers instead of serving. */
type Answer = 'help' | 'version' | 'print-config';

/** The serve flags as given (validated by {@link resolveServeOptions}, so that messages name the flag). */
export type ServeFlags = { readonly transport?: string; readonly port?: string; readonly host?: string };

/** What the arguments ask for; `flags` only when some serve flag was given. */
export type Command = { readonly kind: 'serve' | Answer; readonly flags?: ServeFlags } | { readonly kind: 'error'; readonly message: string };

/** Where the answers go (replaceable for tests). */
export type CommandLineIo = {
  out: (text: string) => void;
  err: (text: string) => void;
  /** Ends the process once everything written has been flushed. */
  exit: (code: number) => void;
};

/** What the command line needs to know of the server. */
export type CommandLineOptions = {
  /** The reflection gate's store directory, when the server has a gate. */
  reflectionDir?: string;
  /** The policy's audit trail, when the server keeps one (its `<PREFIX>_AUDIT_FILE` is listed). */
  audit?: { readonly file?: string };
  env?: NodeJS.ProcessEnv;
  io?: CommandLineIo;
};

const PROCESS_IO: CommandLineIo = {
  out: (text) => void process.stdout.write(text),
  err: (text) => void process.stderr.write(text),
  // an empty write completes after every earlier one: stdout is flushed before the process ends
  exit: (code) => void process.stdout.write('', () => process.exit(code)),
};

const OPTIONS: ReadonlyArray<readonly [string, Answer, string]> = [
  ['--print-config', 'print-config', 'Print the configuration read from the environment (secrets masked), then exit'],
  ['--version', 'version', 'Print the version, then exit'],
  ['--help', 'help', 'Print this help, then exit'],
];

/** Flags that take a value, with the value's form for help and messages. */
const SERVE_FLAGS: ReadonlyArray<readonly [keyof ServeFlags, string, string]> = [
  ['transport', 'stdio|http', `Serve MCP over stdio (default) or Streamable HTTP at http://<host>:<port>/mcp`],
  ['port', 'N', `TCP port for --transport http (default ${SERVE_DEFAULTS.port}; 0: any free port)`],
  ['host', 'H', `Address to listen on for --transport http (default ${SERVE_DEFAULTS.host})`],
];

/**
 * Reads the arguments (`process.argv.slice(2)`): serve flags (`--port 3000` or `--port=3000`,
 * each at most once) and at most one answering option; anything else is an error.
 */
export function parseCommandLine(argv: readonly string[]): Command {
  const aliases: Record<string, Answer> = { '-h': 'help', '-v': 'version' };
  const flags: Record<string, string> = {};
  const answers: Answer[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const eq = a.indexOf('=');
    const flag = SERVE_FLAGS.find(([name]) => a === `--${name}` || (eq > 0 && a.slice(0, eq) === `--${name}`));
    if (flag !== undefined) {
      const [name, form] = flag;
      const value = eq > 0 ? a.slice(eq + 1) : argv[++i];
      if (value === undefined || value === '' || (eq < 0 && value.startsWith('--')))
        return { kind: 'error', message: `--${name} needs a value: --${name} ${form}` };
      if (flags[name] !== undefined) return { kind: 'error', message: `--${name} is given twice` };
      flags[name] = value;
      continue;
    }
    const answer = OPTIONS.find(([f]) => f === a)?.[1] ?? aliases[a];
    if (answer === undefined) return { kind: 'error', message: `unknown ${a.startsWith('-') ? 'option' : 'argument'} ${JSON.stringify(a)}` };
    answers.push(answer);
  }
  if (answers.length > 1) return { kind: 'error', message: `one option at a time (got ${argv.join(' ')})` };
  const given = Object.keys(flags).length > 0 ? { flags: flags as ServeFlags } : {};
  return { kind: answers[0] ?? 'serve', ...given };
}

/** A value as printed: as is when it is plain, else as a JSON string (no line break can split a line). */
function shown(value: string): string {
  return /^[\x21-\x7e]*$/.test(value) && !value.startsWith('"') ? value : JSON.stringify(value);
}

/** `--help`: usage, options and every environment variable. */
export function helpText(config: ServerConfig, variables: readonly Variable[]): string {
  const serve = SERVE_FLAGS.map(([name, form]) => `[--${name} ${form}]`).join(' ');
  const lines = [`Usage: ${config.name} ${serve}`, `       ${config.name} ${OPTIONS.map(([flag]) => flag).join(' | ')}`, ''];
  if (config.instructions !== undefined) lines.push(config.instructions.replace(/\s+/g, ' ').trim(), '');
  lines.push(
    `${config.name} ${config.version} is an MCP server. Started without options, it serves MCP over stdio: requests on stdin, responses on stdout, logs on stderr.`,
    `With --transport http it serves Streamable HTTP at http://<host>:<port>/mcp (health check: /healthz); SIGTERM lets calls under way finish first.`,
    '',
    'Options:',
  );
  const rows: Array<[string, string]> = [
    ...SERVE_FLAGS.map(([name, form, text]): [string, string] => [`--${name} ${form}`, text]),
    ...OPTIONS.map(([flag, , text]): [string, string] => [flag, text]),
  ];
  const width = Math.max(...rows.map(([flag]) => flag.length));
  for (const [flag, text] of rows) lines.push(`  ${flag.padEnd(width)}  ${text}`);
  lines.push('', 'Environment variables:');
  const nameWidth = Math.max(...variables.map((v) => v.name.length));
  for (const v of variables) {
    const only = v.transport === 'http' ? 'HTTP only' : v.transport === 'stdio' ? 'stdio only' : '';
    const notes = [
      v.required ? (v.transport === 'stdio' ? 'required over stdio' : 'required') : only,
      v.secret ? 'secret' : '',
      v.default !== undefined ? `default ${shown(v.default)}` : '',
    ].filter(Boolean);
    lines.push(`  ${v.name.padEnd(nameWidth)}  ${v.description}${notes.length > 0 ? ` (${notes.join(', ')})` : ''}`);
  }
  return lines.join('\n') + '\n';
}

/**
 * `--print-config`: one `NAME=value` line per variable with where the value comes from, secrets
 * masked, in the form of an env file; `ok` is false when a setting is malformed (`problems`).
 */
export function printConfig(
  config: ServerConfig,
  variables: readonly Variable[],
  env: NodeJS.ProcessEnv,
  argv: readonly string[] = [],
): { text: string; ok: boolean; problems: string[] } {
  const rows = variables.map((v) => {
    const value = read(env, v.name);
    if (value !== undefined) return [`${v.name}=${v.secret ? '********' : shown(value)}`, v.secret ? 'set, secret' : 'set'];
    if (v.default !== undefined) return [`${v.name}=${shown(v.default)}`, 'default'];
    return [`${v.name}=`, v.required ? 'NOT SET, required' : 'not set'];
  });
  const width = Math.min(60, Math.max(...rows.map(([line]) => line!.length)));
  const lines = [
    `# ${config.name} ${config.version}: the configuration read from the environment (secrets masked)`,
    ...rows.map(([line, note]) => `${line!.padEnd(width)}  # ${note}`),
  ];
  const problems: string[] = [];
  try {
    resolveSettings(config, env);
  } catch (err) {
    problems.push(err instanceof Error ? err.message : String(err));
  }
  try {
    const o = resolveServeOptions(argv, config, env);
    const tokens =
      o.tokens.size > 0
        ? `, ${o.tokens.size} client token${o.tokens.size > 1 ? 's' : ''} for ${new Set(o.tokens.values()).size} client identit${new Set(o.tokens.values()).size > 1 ? 'ies' : 'y'}`
        : ', no client tokens';
    const oauth = o.oauth !== undefined ? `, OAuth access tokens of ${o.oauth.issuer}` : '';
    lines.push(
      o.transport === 'http'
        ? `# serves Streamable HTTP at http://${o.host.includes(':') ? `[${o.host}]` : o.host}:${o.port}/mcp${tokens}${oauth}`
        : `# serves MCP over stdio, client identity ${o.clientIdentity}`,
    );
  } catch (err) {
    problems.push(err instanceof Error ? err.message : String(err));
  }
  return { text: lines.join('\n') + '\n', ok: problems.length === 0, problems };
}

/**
 * Answers the command line when it asks for something other than serving. Returns true when it
 * did (the process is then ending: the caller must not start the server), false to serve.
 */
export function runCommandLine(argv: readonly string[], config: ServerConfig, tools: readonly VariableTool[], options: CommandLineOptions = {}): boolean {
  const command = parseCommandLine(argv);
  if (command.kind === 'serve') return false;
  const io = options.io ?? PROCESS_IO;
  const env = options.env ?? process.env;
  const variables = () =>
    serverVariables({
      config,
      tools,
      ...(options.reflectionDir !== undefined ? { reflectionDir: options.reflectionDir } : {}),
      ...(options.audit !== undefined ? { audit: options.audit } : {}),
    });
  switch (command.kind) {
    case 'error':
      io.err(`${config.name}: ${command.message}\nRun ${config.name} --help for the options; without any, it serves MCP over stdio.\n`);
      io.exit(2);
      break;
    case 'version':
      io.out(`${config.version}\n`);
      io.exit(0);
      break;
    case 'help':
      io.out(helpText(config, variables()));
      io.exit(0);
      break;
    case 'print-config': {
      const { text, ok, problems } = printConfig(config, variables(), env, argv);
      io.out(text);
      for (const p of problems) io.err(`${config.name}: ${p}\n`);
      io.exit(ok ? 0 : 1);
      break;
    }
  }
  return true;
}

/** How the server serves MCP, resolved from the command line and the environment. */
export type ServeOptions = {
  transport: Transport;
  /** TCP port (HTTP); 0 ⇒ any free port. */
  port: number;
  /** Address to listen on (HTTP), without brackets around an IPv6 address. */
  host: string;
  /** Host header values accepted besides loopback ones, lower-cased (`host` or `host:port`). */
  allowedHosts: string[];
  /** Origin header values accepted besides loopback ones, normalized (`scheme://host[:port]`). */
  allowedOrigins: string[];
  /** MCP HTTP bearer tokens ⇒ client identity; empty ⇒ no token is asked for. */
  tokens: Map<string, string>;
  /** The OAuth resource server's settings (`<PREFIX>_OAUTH_ISSUER` …); absent ⇒ no OAuth. Read for HTTP only. */
  oauth?: OAuthSettings;
  /** Identity of a client that brings none: `<PREFIX>_CLIENT` (or `local`) over stdio, {@link ANONYMOUS} over HTTP. */
  clientIdentity: string;
  /** Idle time after which a legacy HTTP session is closed, in milliseconds. */
  sessionIdleMs: number;
  /** Most legacy HTTP sessions open at once. */
  maxSessions: number;
  /** Most legacy HTTP sessions one client token holds at once. */
  maxSessionsPerClient: number;
  /** Bound of the graceful shutdown on SIGTERM/SIGINT, in milliseconds. */
  drainMs: number;
};

/** The identity of an HTTP client that brings no token (a server without tokens). */
export const ANONYMOUS = 'anonymous';

/** Whether `host` (an address or name to listen on) is on loopback only: 127.0.0.0/8, ::1, localhost. */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h) || /^::ffff:127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/** Shortest `<envPrefix>_STATE_KEY` accepted (the key itself is read by state.ts). */
const MIN_STATE_KEY_LENGTH = 32;

/**
 * Resolves how to serve: flags (`--transport`, `--port`, `--host`) win over
 * `<envPrefix>_TRANSPORT`, `_PORT`, `_HOST`; every other serving setting comes from the
 * environment, blank counting as unset. Reads `<envPrefix>_HTTP_TOKENS_FILE` when set, checks
 * the length of `<envPrefix>_STATE_KEY` (the key itself is state.ts's) and runs
 * {@link checkFromClient}. Throws `SettingsError` naming the flag or variable and how to fix
 * it; no message contains a token.
 *
 * @example
 * const serve = resolveServeOptions(process.argv.slice(2), config, process.env);
 * if (serve.transport === 'http') await serveHttp(factory, { host: serve.host, port: serve.port, tokens: serve.tokens });
 */
export function resolveServeOptions(argv: readonly string[], config: ServerConfig, env: NodeJS.ProcessEnv): ServeOptions {
  const command = parseCommandLine(argv);
  if (command.kind === 'error') throw new SettingsError('command line', `${command.message}; run ${config.name} --help for the options`);
  const flags = command.flags ?? {};
  const names = settingNames(config.envPrefix);
  const pick = (flag: keyof ServeFlags, variable: string): [string, string] | undefined => {
    if (flags[flag] !== undefined) return [`--${flag}`, flags[flag]!.trim()];
    const v = read(env, variable);
    return v !== undefined ? [variable, v] : undefined;
  };

  const t = pick('transport', names.transport);
  const transport = t === undefined ? SERVE_DEFAULTS.transport : t[1].toLowerCase();
  if (transport !== 'stdio' && transport !== 'http') throw new SettingsError(t![0], `${t![0]} must be stdio or http (got ${JSON.stringify(t![1])})`);

  const p = pick('port', names.port);
  let port: number = SERVE_DEFAULTS.port;
  if (p !== undefined) {
    port = /^\d{1,5}$/.test(p[1]) ? Number(p[1]) : NaN;
    if (!(port >= 0 && port <= 65535))
      throw new SettingsError(p[0], `${p[0]} must be a TCP port number from 1 to 65535, or 0 for any free port (got ${JSON.stringify(p[1])})`);
  }

  const h = pick('host', names.host);
  const host = h === undefined ? SERVE_DEFAULTS.host : h[1].replace(/^\[(.*)\]$/, '$1');
  if (h !== undefined && !/^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?|[0-9A-Fa-f:.]*:[0-9A-Fa-f:.%A-Za-z]*)$/.test(host)) {
    throw new SettingsError(h[0], `${h[0]} must be an address or host name to listen on, such as 127.0.0.1, 0.0.0.0 or ::1 (got ${JSON.stringify(h[1])})`);
  }

  const listed = (variable: string, parse: (variable: string, value: string) => string[]) => {
    const v = read(env, variable);
    return v === undefined ? [] : parse(variable, v);
  };
  const allowedHosts = listed(names.allowedHosts, parseAllowedHosts);
  const allowedOrigins = listed(names.allowedOrigins, parseAllowedOrigins);

  const tokens = new Map<string, string>();
  const list = read(env, names.httpTokens);
  if (list !== undefined) addTokens(names.httpTokens, tokenListEntries(names.httpTokens, list), tokens);
  const file = read(env, names.httpTokensFile);
  if (file !== undefined) {
    let text: string;
    try {
      text = readFileSync(path.resolve(file), 'utf8');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      throw new SettingsError(
        names.httpTokensFile,
        `${names.httpTokensFile}: cannot read ${file}${code ? ` (${code})` : ''}; give the path of a readable file with one name=token per line`,
      );
    }
    addTokens(names.httpTokensFile, tokenFileEntries(`${file} (${names.httpTokensFile})`, text), tokens);
  }

  // stdio's identity only: an HTTP client that brings no token is anonymous, whatever the variable says
  const client = read(env, names.client);
  const stdioIdentity = client === undefined ? SERVE_DEFAULTS.client : parseIdentity(names.client, names.client, client);
  const clientIdentity = transport === 'http' ? ANONYMOUS : stdioIdentity;

  const anonymous = read(env, names.allowAnonymous)?.toLowerCase();
  if (anonymous !== undefined && anonymous !== 'true' && anonymous !== 'false')
    throw new SettingsError(names.allowAnonymous, `${names.allowAnonymous} must be true or false (got ${JSON.stringify(anonymous)})`);
  // read and checked whatever the transport (as the client tokens are); used over HTTP only
  const oauthSettings = resolveOAuthSettings(config.envPrefix, env, config.oauth);
  const oauth = transport === 'http' ? oauthSettings : undefined;
  if (transport === 'http' && tokens.size === 0 && oauth === undefined && !isLoopbackHost(host) && anonymous !== 'true') {
    const where = h === undefined ? `${names.host}` : h[0];
    throw new SettingsError(
      where,
      `${where} ${host} listens beyond loopback, but no client authentication is configured: anyone who can reach the port could list and call every tool. Set ${names.oauthIssuer} (OAuth access tokens of your authorization server), or ${names.httpTokens} (name=token,...) or ${names.httpTokensFile} (static client tokens), listen on 127.0.0.1, or set ${names.allowAnonymous}=true to serve every client that reaches the port, knowingly`,
    );
  }

  // `<envPrefix>_HINT_TTL_MS` is the reflection gate's (read only by a server that has one)
  const integer = (key: 'sessionIdleMs' | 'maxSessions' | 'maxSessionsPerClient' | 'drainMs', unit: string): number => {
    const v = read(env, names[key]);
    return v === undefined ? SERVE_DEFAULTS[key] : parsePositiveInteger(names[key], v, unit);
  };

  const key = read(env, names.stateKey);
  if (key !== undefined && key.length < MIN_STATE_KEY_LENGTH) {
    throw new SettingsError(
      names.stateKey,
      `${names.stateKey} must be at least ${MIN_STATE_KEY_LENGTH} characters long (it has ${key.length}); use a random value such as the output of \`openssl rand -hex 32\``,
    );
  }

  const options: ServeOptions = {
    transport,
    port,
    host,
    allowedHosts,
    allowedOrigins,
    tokens,
    ...(oauth !== undefined ? { oauth } : {}),
    clientIdentity,
    sessionIdleMs: integer('sessionIdleMs', 'milliseconds'),
    maxSessions: integer('maxSessions', 'sessions'),
    maxSessionsPerClient: integer('maxSessionsPerClient', 'sessions'),
    drainMs: integer('drainMs', 'milliseconds'),
  };
  checkFromClient(config, options);
  return options;
}

/**
 * Refuses to serve HTTP with client tokens while a security scheme takes the API credential
 * from the MCP request's `Authorization` header (`fromClient`): that header then carries the
 * MCP token, which must never be forwarded to the API. Throws `SettingsError`.
 */
export function checkFromClient(config: ServerConfig, options: Pick<ServeOptions, 'transport' | 'tokens' | 'oauth'>): void {
  if (options.transport !== 'http' || (options.tokens.size === 0 && options.oauth === undefined)) return;
  const names = settingNames(config.envPrefix);
  for (const s of config.securitySchemes ?? []) {
    if (s.kind === 'oauth2ClientCredentials' || s.fromClient?.toLowerCase() !== 'authorization') continue;
    throw new SettingsError(
      names.httpTokens,
      `security scheme ${JSON.stringify(s.name)} takes the API credential from the Authorization header of each MCP request, but with ${names.httpTokens}, ${names.httpTokensFile} or ${names.oauthIssuer} set that header carries the MCP client token; unset them, or rebuild the server with another \`fromClient\` header for the scheme`,
    );
  }
}
