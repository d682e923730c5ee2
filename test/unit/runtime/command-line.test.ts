/**
 * The serve flags and serving settings: `--transport`, `--port`, `--host` winning over
 * `<PREFIX>_*`, lists of hosts and origins, client tokens (inline and from a file), the stdio
 * client identity, durations, and the start-up check of `fromClient: Authorization` with tokens.
 * No message may contain a token.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ServerConfig } from '../../../templates/runtime/core/types.js';
import type { CommandLineIo } from '../../../templates/runtime/process/command-line.js';
import { checkFromClient, helpText, parseCommandLine, resolveServeOptions, runCommandLine } from '../../../templates/runtime/process/command-line.js';
import { SettingsError } from '../../../templates/runtime/process/settings.js';
import { serverVariables } from '../../../templates/runtime/process/variables.js';

const config: ServerConfig = {
  name: 'pets',
  version: '1.2.3',
  envPrefix: 'PETS',
  timeoutMs: 30000,
  maxResponseBytes: 1000000,
  securitySchemes: [{ kind: 'bearer', name: 'tok', fromClient: 'X-Pets-Token', env: { token: 'PETS_TOKEN' } }],
};
const T1 = 'tok-aaaaaaaaaaaaaaaa';
const T2 = 'tok-bbbbbbbbbbbbbbbb';

/** The message of what `f` throws (a SettingsError), checked to contain no token. */
function failure(f: () => unknown, ...tokens: string[]): string {
  try {
    f();
  } catch (err) {
    expect(err).toBeInstanceOf(SettingsError);
    const message = (err as Error).message;
    for (const t of tokens) expect(message).not.toContain(t);
    return message;
  }
  throw new Error('did not throw');
}

describe('parsing the command line', () => {
  it('takes serve flags as --flag value or --flag=value, beside at most one answering option', () => {
    expect(parseCommandLine([])).toEqual({ kind: 'serve' });
    expect(parseCommandLine(['--transport', 'http', '--port=8080', '--host', '0.0.0.0'])).toEqual({
      kind: 'serve',
      flags: { transport: 'http', port: '8080', host: '0.0.0.0' },
    });
    expect(parseCommandLine(['--print-config', '--transport=http'])).toEqual({ kind: 'print-config', flags: { transport: 'http' } });
    expect(parseCommandLine(['--port'])).toEqual({ kind: 'error', message: '--port needs a value: --port N' });
    expect(parseCommandLine(['--transport', '--port', '1'])).toEqual({ kind: 'error', message: '--transport needs a value: --transport stdio|http' });
    expect(parseCommandLine(['--port', '1', '--port', '2'])).toEqual({ kind: 'error', message: '--port is given twice' });
    expect(parseCommandLine(['--ports', '1'])).toEqual({ kind: 'error', message: 'unknown option "--ports"' });
  });

  it('exits 2 with a usage line on stderr for a bad command line', () => {
    let out = '';
    let err = '';
    let code: number | undefined;
    const io: CommandLineIo = { out: (t) => void (out += t), err: (t) => void (err += t), exit: (c) => void (code = c) };
    expect(runCommandLine(['--transport'], config, [], { io })).toBe(true);
    expect({ out, code }).toEqual({ out: '', code: 2 });
    expect(err).toBe('pets: --transport needs a value: --transport stdio|http\nRun pets --help for the options; without any, it serves MCP over stdio.\n');
    expect(runCommandLine(['--transport', 'http'], config, [], { io })).toBe(false);
  });

  it('--help lists the serve flags and says which variables only one transport reads', () => {
    const text = helpText(config, serverVariables({ config, tools: [{ name: 't', http: { params: [] }, security: [['tok']] }] }));
    expect(text).toContain('Usage: pets [--transport stdio|http] [--port N] [--host H]');
    expect(text).toMatch(/--port N +TCP port for --transport http \(default 3000; 0: any free port\)/);
    expect(text).toMatch(/PETS_PORT +TCP port .* \(HTTP only, default 3000\)/);
    expect(text).toMatch(/PETS_HTTP_TOKENS +.* \(HTTP only, secret\)/);
    expect(text).toMatch(/PETS_CLIENT +.* \(stdio only, default local\)/);
    expect(text).toMatch(
      /PETS_TOKEN +Bearer token of security scheme tok; over HTTP each MCP client sends its own in the X-Pets-Token header instead \(required over stdio, secret\)/,
    );
    expect(text).toContain('/healthz');
  });
});

describe('resolving how to serve', () => {
  it('defaults to stdio and the registry defaults', () => {
    const o = resolveServeOptions([], config, {});
    expect(o).toEqual({
      transport: 'stdio',
      port: 3000,
      host: '127.0.0.1',
      allowedHosts: [],
      allowedOrigins: [],
      tokens: new Map(),
      clientIdentity: 'local',
      sessionIdleMs: 1_800_000,
      maxSessions: 100,
      maxSessionsPerClient: 10,
      drainMs: 10_000,
    });
  });

  it('lets flags win over the environment, and reads every serving variable', () => {
    const env = {
      PETS_TRANSPORT: 'stdio',
      PETS_PORT: '9',
      PETS_HOST: '10.0.0.1',
      PETS_ALLOWED_HOSTS: ' MCP.example.com , a.example.com:3000,,[::1]:80 ',
      PETS_ALLOWED_ORIGINS: 'https://app.example.com/, http://localhost:5173',
      PETS_HTTP_TOKENS: `alice=${T1}, ci-bot=${T2}`,
      PETS_CLIENT: 'me@host',
      PETS_SESSION_IDLE_MS: '60000',
      PETS_MAX_SESSIONS: '7',
      PETS_MAX_SESSIONS_PER_CLIENT: '3',
      PETS_DRAIN_MS: '500',
    };
    const o = resolveServeOptions(['--transport', 'HTTP', '--port', '0', '--host', '[::]'], config, env);
    expect(o).toEqual({
      transport: 'http',
      port: 0,
      host: '::',
      allowedHosts: ['mcp.example.com', 'a.example.com:3000', '[::1]:80'],
      allowedOrigins: ['https://app.example.com', 'http://localhost:5173'],
      // <PREFIX>_CLIENT is stdio's identity only: an HTTP client without a token is anonymous
      tokens: new Map([
        [T1, 'alice'],
        [T2, 'ci-bot'],
      ]),
      clientIdentity: 'anonymous',
      sessionIdleMs: 60000,
      maxSessions: 7,
      maxSessionsPerClient: 3,
      drainMs: 500,
    });
    expect(resolveServeOptions([], config, env)).toMatchObject({ transport: 'stdio', port: 9, host: '10.0.0.1', clientIdentity: 'me@host' });
  });

  it('refuses to listen beyond loopback without client tokens, unless <PREFIX>_ALLOW_ANONYMOUS=true', () => {
    for (const host of ['0.0.0.0', '::', '10.0.0.1', '[::]', 'mcp.example.com']) {
      const message = failure(() => resolveServeOptions(['--transport', 'http', '--host', host], config, {}));
      expect(message).toMatch(
        new RegExp(`^--host ${host.replace(/[[\]]/g, '').replace(/\./g, '\\.')} listens beyond loopback, but no client authentication is configured`),
      );
      for (const way of ['PETS_OAUTH_ISSUER', 'PETS_HTTP_TOKENS', 'PETS_HTTP_TOKENS_FILE', '127.0.0.1', 'PETS_ALLOW_ANONYMOUS=true'])
        expect(message).toContain(way);
    }
    // the variable is named when it set the address
    expect(failure(() => resolveServeOptions([], config, { PETS_TRANSPORT: 'http', PETS_HOST: '0.0.0.0' }))).toMatch(
      /^PETS_HOST 0\.0\.0\.0 listens beyond loopback/,
    );
    // the ways out
    expect(resolveServeOptions(['--transport', 'http', '--host', '0.0.0.0'], config, { PETS_ALLOW_ANONYMOUS: 'true' })).toMatchObject({
      host: '0.0.0.0',
      clientIdentity: 'anonymous',
    });
    expect(resolveServeOptions(['--transport', 'http', '--host', '0.0.0.0'], config, { PETS_HTTP_TOKENS: `alice=${T1}` })).toMatchObject({ host: '0.0.0.0' });
    expect(
      resolveServeOptions(['--transport', 'http', '--host', '0.0.0.0'], config, { PETS_OAUTH_ISSUER: 'https://login.example.com/realms/mcp' }),
    ).toMatchObject({ host: '0.0.0.0', oauth: { issuer: 'https://login.example.com/realms/mcp' } });
    for (const host of ['127.0.0.1', '127.1.2.3', '::1', '[::1]', 'localhost'])
      expect(resolveServeOptions(['--transport', 'http', '--host', host], config, {}).transport).toBe('http');
    // stdio listens nowhere
    expect(resolveServeOptions([], config, { PETS_HOST: '0.0.0.0' }).transport).toBe('stdio');
    expect(failure(() => resolveServeOptions(['--transport', 'http', '--host', '0.0.0.0'], config, { PETS_ALLOW_ANONYMOUS: 'yes' }))).toBe(
      'PETS_ALLOW_ANONYMOUS must be true or false (got "yes")',
    );
    expect(failure(() => resolveServeOptions(['--transport', 'http', '--host', '0.0.0.0'], config, { PETS_ALLOW_ANONYMOUS: 'false' }))).toMatch(
      /listens beyond loopback/,
    );
  });

  it('reads the OAuth settings for HTTP, checking each URL, and names the variable of a bad one', () => {
    const http = (env: NodeJS.ProcessEnv) => resolveServeOptions(['--transport', 'http'], config, env);
    expect(
      http({
        PETS_OAUTH_ISSUER: 'https://login.example.com/',
        PETS_OAUTH_AUDIENCE: 'api://mcp',
        PETS_OAUTH_SCOPES: ' read:pets  write:pets ',
        PETS_OAUTH_JWKS_URL: 'https://login.example.com/keys',
        PETS_PUBLIC_URL: 'https://mcp.example.com/mcp',
      }).oauth,
    ).toEqual({
      // the issuer and public URL exactly as set: clients compare them byte for byte
      issuer: 'https://login.example.com/',
      audience: 'api://mcp',
      scopes: ['read:pets', 'write:pets'],
      jwksUrl: 'https://login.example.com/keys',
      publicUrl: 'https://mcp.example.com/mcp',
    });
    expect(http({}).oauth).toBeUndefined();
    // stdio does not use them, but a malformed one is refused there too (as client tokens are)
    expect(resolveServeOptions([], config, { PETS_OAUTH_ISSUER: 'https://login.example.com' }).oauth).toBeUndefined();
    expect(failure(() => resolveServeOptions([], config, { PETS_OAUTH_ISSUER: 'not a url' }))).toMatch(/^PETS_OAUTH_ISSUER must be/);
    // plain http only on loopback
    expect(http({ PETS_OAUTH_ISSUER: 'http://127.0.0.1:8080' }).oauth?.issuer).toBe('http://127.0.0.1:8080');
    expect(failure(() => http({ PETS_OAUTH_ISSUER: 'http://login.example.com' }))).toMatch(/^PETS_OAUTH_ISSUER must be an absolute https:\/\/ URL/);
    expect(failure(() => http({ PETS_OAUTH_ISSUER: 'https://login.example.com?x=1' }))).toMatch(/^PETS_OAUTH_ISSUER must be/);
    expect(failure(() => http({ PETS_OAUTH_ISSUER: 'https://login.example.com', PETS_PUBLIC_URL: 'mcp.example.com' }))).toMatch(/^PETS_PUBLIC_URL must be/);
    expect(failure(() => http({ PETS_OAUTH_ISSUER: 'https://login.example.com', PETS_OAUTH_JWKS_URL: 'ftp://x' }))).toMatch(/^PETS_OAUTH_JWKS_URL must be/);
    expect(failure(() => http({ PETS_OAUTH_ISSUER: 'https://login.example.com', PETS_OAUTH_SCOPES: 'a "b"' }))).toMatch(/^PETS_OAUTH_SCOPES lists scopes/);
    // introspection of opaque tokens: both client credentials, the endpoint optional
    expect(
      http({
        PETS_OAUTH_ISSUER: 'https://login.example.com',
        PETS_OAUTH_CLIENT_ID: 'mcp-rs',
        PETS_OAUTH_CLIENT_SECRET: 's3cret-value',
        PETS_OAUTH_INTROSPECTION_URL: 'https://login.example.com/introspect',
      }).oauth?.introspection,
    ).toEqual({ url: 'https://login.example.com/introspect', clientId: 'mcp-rs', clientSecret: 's3cret-value' });
    expect(failure(() => http({ PETS_OAUTH_ISSUER: 'https://login.example.com', PETS_OAUTH_CLIENT_ID: 'mcp-rs' }))).toBe(
      "PETS_OAUTH_CLIENT_ID is set but PETS_OAUTH_CLIENT_SECRET is not: token introspection needs both (this server's client credentials at the authorization server)",
    );
    expect(failure(() => http({ PETS_OAUTH_ISSUER: 'https://login.example.com', PETS_OAUTH_CLIENT_SECRET: 's3cret-value' }), 's3cret-value')).toMatch(
      /^PETS_OAUTH_CLIENT_SECRET is set but PETS_OAUTH_CLIENT_ID is not/,
    );
    expect(
      failure(() => http({ PETS_OAUTH_ISSUER: 'https://login.example.com', PETS_OAUTH_INTROSPECTION_URL: 'https://login.example.com/introspect' })),
    ).toMatch(/^PETS_OAUTH_INTROSPECTION_URL is set but PETS_OAUTH_CLIENT_ID and PETS_OAUTH_CLIENT_SECRET are not/);
    // the manifest's http.auth gives defaults; the settings win
    const withDefaults: ServerConfig = { ...config, oauth: { issuer: 'https://login.example.com/realms/mcp', audience: 'api://mcp', scopes: ['pets.read'] } };
    expect(resolveServeOptions(['--transport', 'http'], withDefaults, {}).oauth).toEqual({
      issuer: 'https://login.example.com/realms/mcp',
      audience: 'api://mcp',
      scopes: ['pets.read'],
    });
    expect(
      resolveServeOptions(['--transport', 'http'], withDefaults, { PETS_OAUTH_ISSUER: 'https://other.example.com', PETS_OAUTH_SCOPES: 'a b' }).oauth,
    ).toEqual({ issuer: 'https://other.example.com', audience: 'api://mcp', scopes: ['a', 'b'] });
    expect(resolveServeOptions(['--transport', 'http', '--host', '0.0.0.0'], withDefaults, {}).host).toBe('0.0.0.0'); // OAuth from the manifest counts
    expect(failure(() => resolveServeOptions(['--transport', 'http'], { ...config, oauth: { issuer: 'http://login.example.com' } }, {}))).toMatch(
      /^http\.auth\.issuer \(manifest\) must be an absolute https:\/\/ URL/,
    );
    // a setting of OAuth without the issuer is a mistake that says so
    expect(failure(() => http({ PETS_OAUTH_AUDIENCE: 'api://mcp' }))).toBe(
      'PETS_OAUTH_AUDIENCE is set but PETS_OAUTH_ISSUER is not: set the issuer URL of the authorization server too, or unset PETS_OAUTH_AUDIENCE',
    );
  });

  it('refuses OAuth while a scheme takes the API credential from the Authorization header (the MCP token is never forwarded)', () => {
    const fromAuthorization: ServerConfig = {
      ...config,
      securitySchemes: [{ kind: 'bearer', name: 'tok', fromClient: 'Authorization', env: { token: 'PETS_TOKEN' } }],
    };
    expect(failure(() => resolveServeOptions(['--transport', 'http'], fromAuthorization, { PETS_OAUTH_ISSUER: 'https://login.example.com' }))).toContain(
      'PETS_OAUTH_ISSUER set that header carries the MCP client token',
    );
  });

  it('reads only variables the registry lists for a server without a reflection gate', () => {
    const read = new Set<string>();
    const env = new Proxy({} as NodeJS.ProcessEnv, { get: (_t, name) => (typeof name === 'string' && void read.add(name), undefined) });
    resolveServeOptions(['--transport', 'http'], config, env);
    const listed = new Set(serverVariables({ config, tools: [] }).map((v) => v.name));
    expect([...read].filter((n) => !listed.has(n))).toEqual([]);
    expect(read.has('PETS_HINT_TTL_MS')).toBe(false);
  });

  it('normalizes origins as browsers send them, default ports included', () => {
    expect(resolveServeOptions([], config, { PETS_ALLOWED_ORIGINS: 'HTTPS://App.Example.com:443,http://x.example.com:8080/' }).allowedOrigins).toEqual([
      'https://app.example.com',
      'http://x.example.com:8080',
    ]);
  });

  it('reads tokens from a file (comments, blank lines) besides the variable', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'mcpgen-tokens-'));
    const file = path.join(dir, 'tokens');
    writeFileSync(file, `# team\n\nbob = ${T2}\r\n  # old: carol=x\n`);
    expect(resolveServeOptions([], config, { PETS_HTTP_TOKENS: `alice=${T1}`, PETS_HTTP_TOKENS_FILE: file }).tokens).toEqual(
      new Map([
        [T1, 'alice'],
        [T2, 'bob'],
      ]),
    );
    writeFileSync(file, `bob=${T1}\n`);
    expect(failure(() => resolveServeOptions([], config, { PETS_HTTP_TOKENS: `alice=${T1}`, PETS_HTTP_TOKENS_FILE: file }), T1)).toBe(
      `line 1 of ${file} (PETS_HTTP_TOKENS_FILE): the token of bob is the same as the token of alice; every token must be different`,
    );
    expect(failure(() => resolveServeOptions([], config, { PETS_HTTP_TOKENS_FILE: path.join(dir, 'missing') }))).toBe(
      `PETS_HTTP_TOKENS_FILE: cannot read ${path.join(dir, 'missing')} (ENOENT); give the path of a readable file with one name=token per line`,
    );
  });

  it('refuses bad values with a message naming the flag or variable, never a token', () => {
    expect(failure(() => resolveServeOptions(['--transport', 'sse'], config, {}))).toBe('--transport must be stdio or http (got "sse")');
    expect(failure(() => resolveServeOptions([], config, { PETS_TRANSPORT: 'tcp' }))).toBe('PETS_TRANSPORT must be stdio or http (got "tcp")');
    expect(failure(() => resolveServeOptions(['--port', '65536'], config, {}))).toMatch(
      /^--port must be a TCP port number from 1 to 65535, or 0 for any free port \(got "65536"\)/,
    );
    expect(failure(() => resolveServeOptions([], config, { PETS_PORT: '-1' }))).toMatch(/^PETS_PORT must be a TCP port/);
    expect(failure(() => resolveServeOptions(['--host', 'a b'], config, {}))).toMatch(/^--host must be an address/);
    expect(failure(() => resolveServeOptions([], config, { PETS_ALLOWED_HOSTS: 'http://x.example.com' }))).toMatch(/^PETS_ALLOWED_HOSTS lists host names/);
    expect(failure(() => resolveServeOptions([], config, { PETS_ALLOWED_ORIGINS: 'https://x.example.com/app' }))).toMatch(
      /^PETS_ALLOWED_ORIGINS lists origins/,
    );
    expect(failure(() => resolveServeOptions([], config, { PETS_HTTP_TOKENS: T1 }), T1)).toBe(
      'entry 1 of PETS_HTTP_TOKENS is not name=token (the value is not shown: it may be a token)',
    );
    expect(failure(() => resolveServeOptions([], config, { PETS_HTTP_TOKENS: `alice=${T1},=${T2}` }), T1, T2)).toBe(
      'entry 2 of PETS_HTTP_TOKENS: the client identity is empty; write name=token with a name such as alice or ci-bot',
    );
    expect(failure(() => resolveServeOptions([], config, { PETS_HTTP_TOKENS: `alice=${T1},bob=${T1}` }), T1)).toBe(
      'entry 2 of PETS_HTTP_TOKENS: the token of bob is the same as the token of alice; every token must be different',
    );
    expect(failure(() => resolveServeOptions([], config, { PETS_HTTP_TOKENS: 'alice=tiny-tok' }), 'tiny-tok')).toMatch(
      /the token of alice is shorter than 16 characters/,
    );
    expect(failure(() => resolveServeOptions([], config, { PETS_HTTP_TOKENS: `a b=${T1}` }), T1)).toMatch(/client identity "a b" may only hold/);
    expect(failure(() => resolveServeOptions([], config, { PETS_CLIENT: 'a/b' }))).toMatch(/^PETS_CLIENT: the client identity "a\/b"/);
    expect(failure(() => resolveServeOptions([], config, { PETS_DRAIN_MS: '0' }))).toMatch(/^PETS_DRAIN_MS must be a positive whole number/);
    expect(failure(() => resolveServeOptions([], config, { PETS_STATE_KEY: 'short-key' }), 'short-key')).toMatch(
      /^PETS_STATE_KEY must be at least 32 characters long \(it has 9\)/,
    );
    expect(failure(() => resolveServeOptions(['--bogus'], config, {}))).toMatch(/unknown option "--bogus"/);
  });

  it('refuses client tokens while a scheme takes its credential from the Authorization header', () => {
    const fromAuthorization: ServerConfig = {
      ...config,
      securitySchemes: [{ kind: 'apiKey', name: 'key', in: 'header', paramName: 'X-Key', fromClient: 'authorization', env: { apiKey: 'PETS_KEY' } }],
    };
    const env = { PETS_HTTP_TOKENS: `alice=${T1}` };
    expect(failure(() => resolveServeOptions(['--transport', 'http'], fromAuthorization, env), T1)).toMatch(
      /^security scheme "key" takes the API credential from the Authorization header of each MCP request, but with PETS_HTTP_TOKENS, PETS_HTTP_TOKENS_FILE or PETS_OAUTH_ISSUER set that header carries the MCP client token/,
    );
    // without tokens, or over stdio, the header is the client's own
    expect(resolveServeOptions(['--transport', 'http'], fromAuthorization, {}).transport).toBe('http');
    expect(resolveServeOptions([], fromAuthorization, env).transport).toBe('stdio');
    expect(() => checkFromClient(config, { transport: 'http', tokens: new Map([[T1, 'alice']]) })).not.toThrow();
  });

  it('--print-config reports a bad serving setting and says how it would serve', () => {
    let out = '';
    let err = '';
    let code: number | undefined;
    const io: CommandLineIo = { out: (t) => void (out += t), err: (t) => void (err += t), exit: (c) => void (code = c) };
    runCommandLine(['--print-config', '--transport', 'http'], config, [], {
      io,
      env: { PETS_HTTP_TOKENS: `alice=${T1}`, PETS_BASE_URL: 'https://x.example.com' },
    });
    expect(code).toBe(0);
    expect(out).not.toContain(T1);
    expect(out.trimEnd().split('\n').at(-1)).toBe('# serves Streamable HTTP at http://127.0.0.1:3000/mcp, 1 client token for 1 client identity');
    runCommandLine(['--print-config'], config, [], { io, env: { PETS_PORT: 'x', PETS_BASE_URL: 'https://x.example.com' } });
    expect(code).toBe(1);
    expect(err).toMatch(/pets: PETS_PORT must be a TCP port number/);
  });
});
