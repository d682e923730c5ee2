import { describe, expect, it } from 'vitest';
import { getLogLevel } from '../../../templates/runtime/core/log.js';
import type { OperationTool, ServerConfig } from '../../../templates/runtime/core/types.js';
import { schemeVariables as authSchemeVariables } from '../../../templates/runtime/operation/auth.js';
import type { CommandLineIo } from '../../../templates/runtime/process/command-line.js';
import { helpText, parseCommandLine, printConfig, runCommandLine } from '../../../templates/runtime/process/command-line.js';
import { resolveSettings, settingsVariables } from '../../../templates/runtime/process/settings.js';
import { argumentVariables, SETTINGS, schemeVariables, serverVariables, settingNames } from '../../../templates/runtime/process/variables.js';

const config: ServerConfig = {
  name: 'pets',
  version: '1.2.3',
  instructions: 'Manage pets.',
  envPrefix: 'PETS',
  timeoutMs: 30000,
  maxResponseBytes: 1000000,
  uploads: { root: './files' },
  securitySchemes: [
    { kind: 'apiKey', name: 'key', in: 'header', paramName: 'X-Key', env: { apiKey: 'PETS_KEY' } },
    { kind: 'basic', name: 'basic', env: { username: 'PETS_USER', password: 'PETS_PASSWORD' } },
    { kind: 'bearer', name: 'token', env: { token: 'PETS_TOKEN' } },
  ],
};

const tool = (name: string, security: string[][], hidden?: { arg: string; env: string }): OperationTool => ({
  kind: 'operation',
  name,
  inputSchema: { type: 'object' },
  http: {
    method: 'GET',
    path: `/${name}`,
    params: hidden
      ? [
          { arg: hidden.arg, name: hidden.arg, in: 'query', fixed: { env: hidden.env } },
          { arg: 'c', name: 'c', in: 'query', fixed: { value: 1 } },
        ]
      : [],
  },
  security,
});

const tools = [
  tool('listPets', [['key']], { arg: 'account', env: 'PETS_ACCOUNT' }),
  // basic only as an alternative to the token: not required
  tool('getPet', [['token'], ['basic']]),
  tool('countPets', [['token']], { arg: 'tenant', env: 'PETS_ACCOUNT' }),
  tool('publicInfo', []),
];

describe('the variable registry', () => {
  it('declares every setting once, and the settings module takes its names from it', () => {
    expect(settingsVariables('PETS')).toEqual(settingNames('PETS'));
    expect(Object.values(settingNames('X'))).toEqual(Object.values(SETTINGS).map((s) => `X_${s.suffix}`));
    expect(new Set(Object.values(SETTINGS).map((s) => s.suffix)).size).toBe(Object.keys(SETTINGS).length);
  });

  it('lists settings, credentials and hidden-argument variables, each once, with defaults and secrecy', () => {
    const vars = serverVariables({ config, tools, reflectionDir: '.preflight/j' });
    expect(vars.map((v) => [v.name, v.kind, v.required, v.secret, v.default])).toEqual([
      ['PETS_BASE_URL', 'setting', true, false, undefined],
      ['PETS_TIMEOUT_MS', 'setting', false, false, '30000'],
      ['PETS_MAX_RESPONSE_BYTES', 'setting', false, false, '1000000'],
      ['PETS_MAX_IN_FLIGHT_BYTES', 'setting', false, false, '67108864'],
      ['PETS_MAX_ARGUMENT_BYTES', 'setting', false, false, '1048576'],
      ['PETS_LOG_LEVEL', 'setting', false, false, 'info'],
      ['PETS_UPLOAD_ROOT', 'setting', false, false, './files'],
      ['PETS_REFLECTION_DIR', 'setting', false, false, '.preflight/j'],
      ['PETS_TRANSPORT', 'setting', false, false, 'stdio'],
      ['PETS_PORT', 'setting', false, false, '3000'],
      ['PETS_HOST', 'setting', false, false, '127.0.0.1'],
      ['PETS_ALLOWED_HOSTS', 'setting', false, false, undefined],
      ['PETS_ALLOWED_ORIGINS', 'setting', false, false, undefined],
      ['PETS_ALLOW_ANONYMOUS', 'setting', false, false, 'false'],
      ['PETS_HTTP_TOKENS', 'setting', false, true, undefined],
      ['PETS_HTTP_TOKENS_FILE', 'setting', false, false, undefined],
      ['PETS_PUBLIC_URL', 'setting', false, false, undefined],
      ['PETS_OAUTH_ISSUER', 'setting', false, false, undefined],
      ['PETS_OAUTH_AUDIENCE', 'setting', false, false, undefined],
      ['PETS_OAUTH_SCOPES', 'setting', false, false, undefined],
      ['PETS_OAUTH_JWKS_URL', 'setting', false, false, undefined],
      ['PETS_OAUTH_INTROSPECTION_URL', 'setting', false, false, undefined],
      ['PETS_OAUTH_CLIENT_ID', 'setting', false, false, undefined],
      ['PETS_OAUTH_CLIENT_SECRET', 'setting', false, true, undefined],
      ['PETS_CLIENT', 'setting', false, false, 'local'],
      ['PETS_STATE_KEY', 'setting', false, true, undefined],
      ['PETS_HINT_TTL_MS', 'setting', false, false, '86400000'],
      ['PETS_SESSION_IDLE_MS', 'setting', false, false, '1800000'],
      ['PETS_MAX_SESSIONS', 'setting', false, false, '100'],
      ['PETS_MAX_SESSIONS_PER_CLIENT', 'setting', false, false, '10'],
      ['PETS_DRAIN_MS', 'setting', false, false, '10000'],
      ['PETS_REDIS_URL', 'setting', false, true, undefined],
      ['PETS_REDIS_PREFIX', 'setting', false, false, undefined],
      ['PETS_REDIS_FAIL_OPEN', 'setting', false, false, undefined],
      ['PETS_REDIS_LEASE_MS', 'setting', false, false, '30000'],
      ['PETS_REDIS_TIMEOUT_MS', 'setting', false, false, '2000'],
      ['PETS_KEY', 'credential', true, true, undefined],
      ['PETS_USER', 'credential', false, true, undefined],
      ['PETS_PASSWORD', 'credential', false, true, undefined],
      ['PETS_TOKEN', 'credential', true, true, undefined],
      ['PETS_ACCOUNT', 'argument', true, true, undefined],
    ]);
    const byName = Object.fromEntries(vars.map((v) => [v.name, v]));
    expect(byName.PETS_ACCOUNT!.description).toBe('Value of the hidden arguments account of listPets, tenant of countPets');
    expect(byName.PETS_USER!.description).toMatch(
      /User name of security scheme basic \(optional: every tool that uses it accepts another credential, or none, instead\)/,
    );
  });

  it('leaves out what the server does not have, and does not require a base URL it has', () => {
    const { uploads: _u, securitySchemes: _s, ...plain } = config;
    const vars = serverVariables({ config: { ...plain, baseUrl: 'https://pets.example.com' }, tools: [] });
    expect(vars.map((v) => v.name)).toEqual([
      'PETS_BASE_URL',
      'PETS_TIMEOUT_MS',
      'PETS_MAX_RESPONSE_BYTES',
      'PETS_MAX_IN_FLIGHT_BYTES',
      'PETS_MAX_ARGUMENT_BYTES',
      'PETS_LOG_LEVEL',
      // serving settings; no PETS_HINT_TTL_MS without a reflection gate
      'PETS_TRANSPORT',
      'PETS_PORT',
      'PETS_HOST',
      'PETS_ALLOWED_HOSTS',
      'PETS_ALLOWED_ORIGINS',
      'PETS_ALLOW_ANONYMOUS',
      'PETS_HTTP_TOKENS',
      'PETS_HTTP_TOKENS_FILE',
      'PETS_PUBLIC_URL',
      'PETS_OAUTH_ISSUER',
      'PETS_OAUTH_AUDIENCE',
      'PETS_OAUTH_SCOPES',
      'PETS_OAUTH_JWKS_URL',
      'PETS_OAUTH_INTROSPECTION_URL',
      'PETS_OAUTH_CLIENT_ID',
      'PETS_OAUTH_CLIENT_SECRET',
      'PETS_CLIENT',
      'PETS_STATE_KEY',
      'PETS_SESSION_IDLE_MS',
      'PETS_MAX_SESSIONS',
      'PETS_MAX_SESSIONS_PER_CLIENT',
      'PETS_DRAIN_MS',
      'PETS_REDIS_URL',
      'PETS_REDIS_PREFIX',
      'PETS_REDIS_FAIL_OPEN',
      'PETS_REDIS_LEASE_MS',
      'PETS_REDIS_TIMEOUT_MS',
    ]);
    expect(vars[0]).toMatchObject({ required: false, default: 'https://pets.example.com' });
  });

  it('keeps descriptions on one line whatever the spec names its schemes', () => {
    const vars = serverVariables({
      config: { ...config, securitySchemes: [{ kind: 'bearer', name: 'evil\nPETS_INJECTED=1', env: { token: 'PETS_T' } }] },
      tools: [tool('x', [['evil\nPETS_INJECTED=1']])],
    });
    expect(vars.find((v) => v.name === 'PETS_T')!.description).toBe('Bearer token of security scheme evil PETS_INJECTED=1');
  });

  it('uses the defaults the settings module applies', () => {
    const applied = resolveSettings({ ...config, baseUrl: 'https://x.example.com' }, {});
    const declared = Object.fromEntries(serverVariables({ config, tools: [] }).map((v) => [v.name, v.default]));
    expect(declared.PETS_TIMEOUT_MS).toBe(String(applied.timeoutMs));
    expect(declared.PETS_MAX_RESPONSE_BYTES).toBe(String(applied.maxResponseBytes));
    const inFlight = (applied as { maxInFlightBytes?: number }).maxInFlightBytes;
    if (inFlight !== undefined) expect(declared.PETS_MAX_IN_FLIGHT_BYTES).toBe(String(inFlight));
    expect(getLogLevel()).toBe(declared.PETS_LOG_LEVEL);
  });

  it('is where auth.ts and arguments.ts take variable names from', () => {
    expect(authSchemeVariables).toBe(schemeVariables);
    expect([...argumentVariables(tools)]).toEqual([['PETS_ACCOUNT', ['listPets', 'countPets']]]);
  });
});

function io(): CommandLineIo & { stdout: string; stderr: string; code?: number } {
  const out = {
    stdout: '',
    stderr: '',
    code: undefined as number | undefined,
    out: (t: string) => void (out.stdout += t),
    err: (t: string) => void (out.stderr += t),
    exit: (c: number) => void (out.code = c),
  };
  return out;
}

describe('the command line', () => {
  it('serves without arguments and answers one option at a time', () => {
    expect(parseCommandLine([])).toEqual({ kind: 'serve' });
    expect(parseCommandLine(['--print-config'])).toEqual({ kind: 'print-config' });
    expect(parseCommandLine(['-h'])).toEqual({ kind: 'help' });
    expect(parseCommandLine(['-v'])).toEqual({ kind: 'version' });
    expect(parseCommandLine(['--prin-config'])).toEqual({ kind: 'error', message: 'unknown option "--prin-config"' });
    expect(parseCommandLine(['serve'])).toEqual({ kind: 'error', message: 'unknown argument "serve"' });
    expect(parseCommandLine(['--help', '--version'])).toMatchObject({ kind: 'error' });
  });

  it('does nothing when asked to serve', () => {
    const sink = io();
    expect(runCommandLine([], config, tools, { io: sink, env: {} })).toBe(false);
    expect(sink).toMatchObject({ stdout: '', stderr: '', code: undefined });
  });

  it('--version prints the version on stdout and exits 0', () => {
    const sink = io();
    expect(runCommandLine(['--version'], config, tools, { io: sink })).toBe(true);
    expect(sink).toMatchObject({ stdout: '1.2.3\n', stderr: '', code: 0 });
  });

  it('--help names every variable and option', () => {
    const text = helpText(config, serverVariables({ config, tools }));
    for (const name of ['PETS_BASE_URL', 'PETS_KEY', 'PETS_ACCOUNT', '--print-config', '--version', '--help']) expect(text).toContain(name);
    expect(text).toMatch(/PETS_TIMEOUT_MS +Timeout of one API request, in milliseconds \(default 30000\)/);
    expect(text).toMatch(/PETS_KEY +API key of security scheme key \(required, secret\)/);
  });

  it('--print-config prints what the environment sets and the defaults, secrets masked, and exits 0', () => {
    const sink = io();
    const env = { PETS_BASE_URL: 'http://127.0.0.1:9', PETS_TIMEOUT_MS: ' 500 ', PETS_KEY: 'k-secret-value', PETS_ACCOUNT: 'acct 42' };
    runCommandLine(['--print-config'], config, tools, { io: sink, env });
    expect(sink.code).toBe(0);
    expect(sink.stderr).toBe('');
    expect(sink.stdout).not.toContain('k-secret-value');
    expect(sink.stdout).not.toContain('acct 42');
    const lines = sink.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe('# pets 1.2.3: the configuration read from the environment (secrets masked)');
    const row = (name: string) => lines.find((l) => l.startsWith(`${name}=`))!.replace(/ +#/, ' #');
    expect(row('PETS_BASE_URL')).toBe('PETS_BASE_URL=http://127.0.0.1:9 # set');
    expect(row('PETS_TIMEOUT_MS')).toBe('PETS_TIMEOUT_MS=500 # set');
    expect(row('PETS_MAX_RESPONSE_BYTES')).toBe('PETS_MAX_RESPONSE_BYTES=1000000 # default');
    expect(row('PETS_KEY')).toBe('PETS_KEY=******** # set, secret');
    expect(row('PETS_ACCOUNT')).toBe('PETS_ACCOUNT=******** # set, secret');
    expect(row('PETS_TOKEN')).toBe('PETS_TOKEN= # NOT SET, required');
    expect(row('PETS_USER')).toBe('PETS_USER= # not set');
    // one line per variable, then how the server would serve
    expect(lines).toHaveLength(2 + serverVariables({ config, tools }).length);
    expect(lines.at(-1)).toBe('# serves MCP over stdio, client identity local');
  });

  it('--print-config quotes values that are not plain, and exits 1 naming a malformed setting', () => {
    const sink = io();
    runCommandLine(['--print-config'], config, tools, { io: sink, env: { PETS_TIMEOUT_MS: 'soon', PETS_LOG_LEVEL: 'a\nb' } });
    expect(sink.code).toBe(1);
    expect(sink.stdout).toContain('PETS_LOG_LEVEL="a\\nb"');
    expect(sink.stderr).toMatch(/^pets: PETS_TIMEOUT_MS must be a positive whole number of milliseconds/);
    expect(printConfig(config, [], {}).ok).toBe(true);
  });

  it('reports an unknown argument on stderr with exit code 2, writing nothing to stdout', () => {
    const sink = io();
    expect(runCommandLine(['--stdio'], config, tools, { io: sink })).toBe(true);
    expect(sink).toMatchObject({ stdout: '', code: 2 });
    expect(sink.stderr).toBe('pets: unknown option "--stdio"\nRun pets --help for the options; without any, it serves MCP over stdio.\n');
  });
});
