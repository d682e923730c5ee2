/**
 * Security schemes and requirements in the IR: Swagger 2.0 and OpenAPI 3.x schemes, default and
 * mapped variable names, operation-level overrides, and located manifest diagnostics.
 */
import { describe, expect, it } from 'vitest';
import { emitProject } from '../../src/emit/index.js';
import { reservedVariables, SETTINGS_SUFFIXES } from '../../src/ir/tools/security.js';
import type { SpecVersion } from '../../src/openapi/load.js';
import { SETTINGS } from '../../templates/runtime/process/variables.js';
import { irFromText } from '../helpers/ir.js';

const SPEC3 = `openapi: 3.1.0
info: { title: t, version: '1' }
servers: [{ url: 'https://api.example.com' }]
security:
  - api_key: []
components:
  securitySchemes:
    api_key: { type: apiKey, in: header, name: X-API-Key }
    query-key: { type: apiKey, in: query, name: key }
    cookieKey: { type: apiKey, in: cookie, name: sid }
    bearer: { type: http, scheme: Bearer }
    basic: { type: http, scheme: basic }
    cc:
      type: oauth2
      flows:
        clientCredentials: { tokenUrl: 'https://auth.example.com/token', scopes: { read: r, write: w, admin: a } }
    implicit:
      type: oauth2
      flows:
        implicit: { authorizationUrl: 'https://auth.example.com/authorize', scopes: {} }
    oidc: { type: openIdConnect, openIdConnectUrl: 'https://auth.example.com/.well-known/openid-configuration' }
    unused: { type: http, scheme: bearer }
paths:
  /default:
    get: { operationId: usesDefault, responses: { '200': { description: ok } } }
  /public:
    get: { operationId: isPublic, security: [], responses: { '200': { description: ok } } }
  /optional:
    get: { operationId: isOptional, security: [{}, { bearer: [] }], responses: { '200': { description: ok } } }
  /only-empty:
    get: { operationId: onlyEmpty, security: [{}], responses: { '200': { description: ok } } }
  /both:
    get: { operationId: needsBoth, security: [{ query-key: [], cookieKey: [] }, { basic: [] }], responses: { '200': { description: ok } } }
  /cc:
    get: { operationId: usesCc, security: [{ cc: [write, read] }], responses: { '200': { description: ok } } }
    post: { operationId: usesCc2, security: [{ cc: [read] }], responses: { '200': { description: ok } } }
  /fallback:
    get: { operationId: usesFallback, security: [{ implicit: [] }, { oidc: [] }], responses: { '200': { description: ok } } }
  /undefined:
    get: { operationId: usesUndefined, security: [{ nope: [] }, { bearer: [] }], responses: { '200': { description: ok } } }
`;

const SPEC2 = `swagger: '2.0'
info: { title: t, version: '1' }
host: api.example.com
securityDefinitions:
  basicAuth: { type: basic }
  key: { type: apiKey, in: query, name: api_key }
  app: { type: oauth2, flow: application, tokenUrl: 'https://auth.example.com/token', scopes: { 'pets:read': r } }
  implicitAuth: { type: oauth2, flow: implicit, authorizationUrl: 'https://auth.example.com/a', scopes: {} }
security:
  - basicAuth: []
paths:
  /a:
    get: { operationId: a, responses: { '200': { description: ok } } }
  /b:
    get: { operationId: b, security: [{ key: [] }, { app: ['pets:read'] }], responses: { '200': { description: ok } } }
  /c:
    get: { operationId: c, security: [{ implicitAuth: [] }], responses: { '200': { description: ok } } }
  /d:
    get: { operationId: d, security: [], responses: { '200': { description: ok } } }
`;

function setup(manifestYaml: string, specYaml = SPEC3, version: SpecVersion = '3.1') {
  return irFromText({ spec: specYaml, version, manifestYaml, manifest: { envPrefix: 'PETS' } });
}

const security = (ir: ReturnType<typeof setup>['ir']) => Object.fromEntries(ir.tools.map((t) => [t.name, t.security]));

describe('security requirements (OpenAPI 3.x)', () => {
  it("takes the operation's security, else the document's; `[]` and `[{}]` mean none, `{}` among others means optional", () => {
    const { ir } = setup('');
    expect(security(ir)).toEqual({
      usesDefault: [['api_key']],
      isPublic: [],
      isOptional: [[], ['bearer']],
      onlyEmpty: [],
      needsBoth: [['cookieKey', 'query-key'], ['basic']],
      usesCc: [['cc']],
      usesCc2: [['cc']],
      usesFallback: [['implicit'], ['oidc']],
      usesUndefined: [['bearer']],
    });
  });

  it('resolves every used scheme with default variable names, sorted, leaving unused ones out', () => {
    const { ir } = setup('');
    expect(ir.securitySchemes.map((s) => s.name)).toEqual(['api_key', 'basic', 'bearer', 'cc', 'cookieKey', 'implicit', 'oidc', 'query-key']);
    const byName = Object.fromEntries(ir.securitySchemes.map(({ origin: _o, ...s }) => [s.name, s]));
    expect(byName).toEqual({
      api_key: { name: 'api_key', kind: 'apiKey', in: 'header', paramName: 'X-API-Key', env: { apiKey: 'PETS_API_KEY_API_KEY' } },
      'query-key': { name: 'query-key', kind: 'apiKey', in: 'query', paramName: 'key', env: { apiKey: 'PETS_QUERY_KEY_API_KEY' } },
      cookieKey: { name: 'cookieKey', kind: 'apiKey', in: 'cookie', paramName: 'sid', env: { apiKey: 'PETS_COOKIEKEY_API_KEY' } },
      bearer: { name: 'bearer', kind: 'bearer', env: { token: 'PETS_BEARER_TOKEN' } },
      basic: { name: 'basic', kind: 'basic', env: { username: 'PETS_BASIC_USERNAME', password: 'PETS_BASIC_PASSWORD' } },
      cc: {
        name: 'cc',
        kind: 'oauth2ClientCredentials',
        tokenUrl: 'https://auth.example.com/token',
        scopes: ['read', 'write'],
        env: { clientId: 'PETS_CC_CLIENT_ID', clientSecret: 'PETS_CC_CLIENT_SECRET' },
      },
      implicit: { name: 'implicit', kind: 'bearer', fallbackFrom: 'oauth2 (implicit)', env: { token: 'PETS_IMPLICIT_TOKEN' } },
      oidc: { name: 'oidc', kind: 'bearer', fallbackFrom: 'openIdConnect', env: { token: 'PETS_OIDC_TOKEN' } },
    });
    expect(ir.securitySchemes.find((s) => s.name === 'cc')!.origin).toEqual({ file: 'openapi.yaml', pointer: '/components/securitySchemes/cc' });
  });

  it('warns about schemes it sends as static tokens and about requirements naming undefined schemes', () => {
    const { diagnostics } = setup('');
    expect(diagnostics.sorted().map((d) => [d.code, d.severity, d.location.pointer, d.location.line])).toEqual([
      ['MCPGEN_AUTH_UNSUPPORTED_SCHEME', 'warning', '/components/securitySchemes/implicit', 17],
      ['MCPGEN_AUTH_UNSUPPORTED_SCHEME', 'warning', '/components/securitySchemes/oidc', 21],
      ['MCPGEN_SPEC_UNDEFINED_SECURITY_SCHEME', 'warning', '/paths/~1undefined/get/security/0/nope', 40],
    ]);
    expect(diagnostics.items.find((d) => d.location.pointer.endsWith('/oidc'))!.message).toContain('PETS_OIDC_TOKEN');
  });

  it("clears the static-token warning once its help is followed: the help's manifest line, as written, acknowledges it", () => {
    const { diagnostics } = setup('');
    const helps = diagnostics.items.filter((d) => d.code === 'MCPGEN_AUTH_UNSUPPORTED_SCHEME').map((d) => d.help);
    expect(helps).toEqual([
      'obtain a token yourself and name the variable that holds it in mcpgen.yaml, which acknowledges this: `auth: { implicit: { env: PETS_IMPLICIT_TOKEN } }`',
      'obtain a token yourself and name the variable that holds it in mcpgen.yaml, which acknowledges this: `auth: { oidc: { env: PETS_OIDC_TOKEN } }`',
    ]);
    // follow the help literally, one scheme at a time: only the other warning stays
    const line = (h: string) => /`(auth: .*)`$/.exec(h)![1]!;
    const first = setup(line(helps[0]!));
    expect(first.diagnostics.items.filter((d) => d.code === 'MCPGEN_AUTH_UNSUPPORTED_SCHEME').map((d) => d.location.pointer)).toEqual([
      '/components/securitySchemes/oidc',
    ]);
    const both = setup(`auth: { implicit: { env: PETS_IMPLICIT_TOKEN }, oidc: { env: OIDC } }`);
    expect(both.diagnostics.items.map((d) => d.code)).toEqual(['MCPGEN_SPEC_UNDEFINED_SECURITY_SCHEME']);
    expect(both.ir.securitySchemes.find((s) => s.name === 'oidc')).toMatchObject({ kind: 'bearer', fallbackFrom: 'openIdConnect', env: { token: 'OIDC' } });
  });

  it('quotes a scheme name in the help when YAML needs it', () => {
    const spec = SPEC3.replace('    oidc: { type: openIdConnect', "    'my oidc': { type: openIdConnect").replace('{ oidc: [] }', "{ 'my oidc': [] }");
    const { diagnostics } = setup('', spec);
    const help = diagnostics.items.find((d) => d.location.pointer === '/components/securitySchemes/my oidc')!.help;
    expect(help).toContain('`auth: { "my oidc": { env: PETS_MY_OIDC_TOKEN } }`');
    expect(
      setup('auth: { "my oidc": { env: PETS_MY_OIDC_TOKEN } }', spec).diagnostics.items.filter((d) => d.code === 'MCPGEN_AUTH_UNSUPPORTED_SCHEME'),
    ).toHaveLength(1);
  });

  it("uses the manifest's variable names, token URL and scopes", () => {
    const { ir, diagnostics } = setup(`auth:
  api_key: { env: MY_KEY }
  basic: { username: U, password: P }
  cc: { clientId: CID, clientSecret: CSECRET, tokenUrl: 'https://other.example.com/token', scopes: [] }
  implicit: { env: IMPLICIT_TOKEN }
  unused: { env: NOT_USED }
`);
    expect(diagnostics.hasErrors).toBe(false);
    const byName = Object.fromEntries(ir.securitySchemes.map((s) => [s.name, s]));
    expect(byName.api_key!.env).toEqual({ apiKey: 'MY_KEY' });
    expect(byName.basic!.env).toEqual({ username: 'U', password: 'P' });
    expect(byName.cc).toMatchObject({ tokenUrl: 'https://other.example.com/token', scopes: [], env: { clientId: 'CID', clientSecret: 'CSECRET' } });
    expect(byName.implicit!.env).toEqual({ token: 'IMPLICIT_TOKEN' });
    expect(byName.unused).toBeUndefined();
  });

  it('reports an unknown scheme at its manifest key, with a suggestion', () => {
    const { diagnostics } = setup(`auth:\n  api-key:\n    env: MY_KEY\n  zzz: {}\n`);
    const errors = diagnostics.sorted().filter((d) => d.severity === 'error');
    expect(errors.map((d) => [d.code, d.location.file, d.location.pointer, d.location.line, d.location.col, d.help])).toEqual([
      ['MCPGEN_UNKNOWN_AUTH_SCHEME', 'mcpgen.yaml', '/auth/api-key', 2, 3, 'did you mean "api_key"?'],
      [
        'MCPGEN_UNKNOWN_AUTH_SCHEME',
        'mcpgen.yaml',
        '/auth/zzz',
        4,
        3,
        'the spec defines: api_key, basic, bearer, cc, cookieKey, implicit, oidc, query-key, unused',
      ],
    ]);
  });

  it('reports fields that do not fit the scheme type, and settings variables, at the field', () => {
    const { diagnostics } = setup(`auth:\n  api_key:\n    username: U\n  cc:\n    env: T\n  bearer:\n    env: PETS_BASE_URL\n`);
    expect(
      diagnostics
        .sorted()
        .filter((d) => d.severity === 'error')
        .map((d) => [d.code, d.location.pointer, d.location.line, d.location.col, d.help]),
    ).toEqual([
      ['MCPGEN_AUTH_INVALID_FIELD', '/auth/api_key/username', 3, 5, '"api_key" takes `env`, `fromClient`'],
      ['MCPGEN_AUTH_INVALID_FIELD', '/auth/cc/env', 5, 5, '"cc" takes `clientId`, `clientSecret`, `tokenUrl`, `scopes`'],
      ['MCPGEN_AUTH_INVALID_FIELD', '/auth/bearer/env', 7, 10, 'choose another variable name'],
    ]);
  });

  it("keeps a bearer scheme's token exchange (audience, scopes) and refuses it on other kinds, located", () => {
    const { ir, diagnostics } = setup(
      `auth:\n  bearer:\n    exchange: { audience: 'https://api.example.com', scopes: [pets.read] }\n  implicit:\n    exchange: { audience: api://pets }\n  api_key:\n    exchange: { audience: x }\n`,
    );
    expect(
      ir.securitySchemes.filter((s) => s.kind === 'bearer' && s.exchange !== undefined).map((s) => [s.name, s.kind === 'bearer' ? s.exchange : undefined]),
    ).toEqual([
      ['bearer', { audience: 'https://api.example.com', scopes: ['pets.read'] }],
      ['implicit', { audience: 'api://pets' }],
    ]);
    expect(
      diagnostics
        .sorted()
        .filter((d) => d.severity === 'error')
        .map((d) => [d.code, d.location.pointer, d.help]),
    ).toEqual([['MCPGEN_AUTH_INVALID_FIELD', '/auth/api_key/exchange', '"api_key" takes `env`, `fromClient`']]);
  });
});

describe('reserved variables', () => {
  const ARG_SPEC = `openapi: 3.1.0
info: { title: t, version: '1' }
components:
  securitySchemes:
    key: { type: apiKey, in: header, name: X-Key }
    basic: { type: http, scheme: basic }
security: [{ key: [] }, { basic: [] }]
paths:
  /pets:
    get:
      operationId: listPets
      parameters: [{ name: account, in: query, required: true, schema: { type: string } }, { name: tenant, in: query, schema: { type: string } }]
      responses: { '200': { description: ok } }
`;

  it("reserves every variable of the server's registry, derived from it", () => {
    expect(SETTINGS_SUFFIXES).toEqual(Object.values(SETTINGS).map((s) => s.suffix));
    for (const suffix of [
      'BASE_URL',
      'UPLOAD_ROOT',
      'REFLECTION_DIR',
      'TRANSPORT',
      'PORT',
      'HOST',
      'ALLOWED_HOSTS',
      'ALLOWED_ORIGINS',
      'HTTP_TOKENS',
      'HTTP_TOKENS_FILE',
      'CLIENT',
      'STATE_KEY',
      'HINT_TTL_MS',
      'SESSION_IDLE_MS',
      'MAX_SESSIONS',
      'MAX_SESSIONS_PER_CLIENT',
      'MAX_ARGUMENT_BYTES',
      'ALLOW_ANONYMOUS',
      'DRAIN_MS',
    ]) {
      expect(reservedVariables('PETS').has(`PETS_${suffix}`)).toBe(true);
    }
  });

  it('refuses a registry variable as a credential or hidden-argument variable, located at the field', () => {
    const { diagnostics } = setup(
      `auth:
  key: { env: PETS_UPLOAD_ROOT }
  basic: { username: PETS_REFLECTION_DIR, password: PETS_STATE_KEY }
overrides:
  listPets:
    arguments:
      account: { hidden: true, env: PETS_PORT }
      tenant: { hidden: true, env: PETS_HTTP_TOKENS }
`,
      ARG_SPEC,
    );
    expect(
      diagnostics
        .sorted()
        .filter((d) => d.severity === 'error')
        .map((d) => [d.code, d.location.pointer, d.location.line, d.message]),
    ).toEqual([
      ['MCPGEN_AUTH_INVALID_FIELD', '/auth/key/env', 2, "PETS_UPLOAD_ROOT is one of the server's own settings variables and cannot hold a secret"],
      ['MCPGEN_AUTH_INVALID_FIELD', '/auth/basic/username', 3, "PETS_REFLECTION_DIR is one of the server's own settings variables and cannot hold a secret"],
      ['MCPGEN_AUTH_INVALID_FIELD', '/auth/basic/password', 3, "PETS_STATE_KEY is one of the server's own settings variables and cannot hold a secret"],
      [
        'MCPGEN_ARGUMENT_OVERRIDE_INVALID',
        '/overrides/listPets/arguments/account/env',
        7,
        "PETS_PORT is one of the server's own settings variables and cannot hold an argument",
      ],
      [
        'MCPGEN_ARGUMENT_OVERRIDE_INVALID',
        '/overrides/listPets/arguments/tenant/env',
        8,
        "PETS_HTTP_TOKENS is one of the server's own settings variables and cannot hold an argument",
      ],
    ]);
  });
});

describe('credentials from the MCP client (fromClient)', () => {
  it('records the header on apiKey, bearer and basic schemes, and nothing on the others', () => {
    const { ir, diagnostics } = setup(`auth:
  api_key: { fromClient: X-Upstream-Key }
  bearer: { env: GH_TOKEN, fromClient: x-github-token }
  basic: { fromClient: X-Upstream-Basic }
`);
    expect(diagnostics.sorted().filter((d) => d.location.file === 'mcpgen.yaml')).toEqual([]);
    const byName = Object.fromEntries(ir.securitySchemes.map((s) => [s.name, s]));
    expect(byName.api_key).toMatchObject({ kind: 'apiKey', fromClient: 'X-Upstream-Key', env: { apiKey: 'PETS_API_KEY_API_KEY' } });
    expect(byName.bearer).toMatchObject({ kind: 'bearer', fromClient: 'x-github-token', env: { token: 'GH_TOKEN' } });
    expect(byName.basic).toMatchObject({ kind: 'basic', fromClient: 'X-Upstream-Basic' });
    expect(ir.securitySchemes.filter((s) => 'fromClient' in s).map((s) => s.name)).toEqual(['api_key', 'basic', 'bearer']);
  });

  it('refuses oauth2 schemes, non-header names and transport headers, and warns about Authorization, located', () => {
    const { diagnostics } = setup(`auth:
  cc: { fromClient: X-Token }
  implicit: { fromClient: X-Token }
  api_key: { fromClient: 'X Key' }
  bearer: { fromClient: Mcp-Session-Id }
  basic: { fromClient: authorization }
`);
    expect(
      diagnostics
        .sorted()
        .filter((d) => d.location.file === 'mcpgen.yaml')
        .map((d) => [d.code, d.severity, d.location.pointer, d.location.line, d.location.col]),
    ).toEqual([
      ['MCPGEN_AUTH_INVALID_FIELD', 'error', '/auth/cc/fromClient', 2, 9],
      ['MCPGEN_AUTH_INVALID_FIELD', 'error', '/auth/implicit/fromClient', 3, 15],
      ['MCPGEN_AUTH_INVALID_FIELD', 'error', '/auth/api_key/fromClient', 4, 26],
      ['MCPGEN_AUTH_INVALID_FIELD', 'error', '/auth/bearer/fromClient', 5, 25],
      ['MCPGEN_AUTH_FROM_CLIENT_AUTHORIZATION', 'warning', '/auth/basic/fromClient', 6, 24],
    ]);
    const text = (p: string) => diagnostics.items.find((d) => d.location.pointer === p)!.message;
    expect(text('/auth/implicit/fromClient')).toContain('not for oauth2');
    expect(text('/auth/api_key/fromClient')).toBe('`fromClient` of "api_key" must be an HTTP header name (got "X Key")');
    expect(text('/auth/bearer/fromClient')).toContain('a header of the MCP transport itself');
    expect(text('/auth/basic/fromClient')).toBe(
      '`fromClient` of "basic" is Authorization, the header that carries the MCP client tokens over HTTP: the server refuses to start with PETS_HTTP_TOKENS, PETS_HTTP_TOKENS_FILE or PETS_OAUTH_ISSUER set',
    );
  });
});

describe('security (Swagger 2.0)', () => {
  it('reads securityDefinitions: basic, apiKey, oauth2 application, and implicit as a static token', () => {
    const { ir, diagnostics } = setup('auth:\n  app: { scopes: [extra] }\n', SPEC2, '2.0');
    expect(security(ir)).toEqual({ a: [['basicAuth']], b: [['key'], ['app']], c: [['implicitAuth']], d: [] });
    expect(ir.securitySchemes.map(({ origin: _o, ...s }) => s)).toEqual([
      {
        name: 'app',
        kind: 'oauth2ClientCredentials',
        tokenUrl: 'https://auth.example.com/token',
        scopes: ['extra'],
        env: { clientId: 'PETS_APP_CLIENT_ID', clientSecret: 'PETS_APP_CLIENT_SECRET' },
      },
      { name: 'basicAuth', kind: 'basic', env: { username: 'PETS_BASICAUTH_USERNAME', password: 'PETS_BASICAUTH_PASSWORD' } },
      { name: 'implicitAuth', kind: 'bearer', fallbackFrom: 'oauth2 (implicit)', env: { token: 'PETS_IMPLICITAUTH_TOKEN' } },
      { name: 'key', kind: 'apiKey', in: 'query', paramName: 'api_key', env: { apiKey: 'PETS_KEY_API_KEY' } },
    ]);
    expect(diagnostics.items.map((d) => [d.code, d.location.pointer])).toEqual([['MCPGEN_AUTH_UNSUPPORTED_SCHEME', '/securityDefinitions/implicitAuth']]);
  });

  it('defaults oauth2 scopes to those the included operations require', () => {
    const { ir } = setup('', SPEC2, '2.0');
    expect(ir.securitySchemes.find((s) => s.name === 'app')).toMatchObject({ scopes: ['pets:read'] });
  });
});

describe('emitted files', () => {
  it('carry variable names and requirements, never values, and the README lists every variable', () => {
    const { ir } = setup('auth:\n  bearer: { env: MY_TOKEN }\n');
    const files = emitProject(ir);
    const config = files.get('src/config.gen.ts')!;
    expect(config).toContain('"securitySchemes": [');
    expect(config).toContain('"token": "MY_TOKEN"');
    expect(config).toContain('"tokenUrl": "https://auth.example.com/token"');
    const tools = files.get('src/tools.gen.ts')!;
    expect(tools).toContain('"security": [[],["bearer"]]');
    expect(tools).toContain('"security": [["cookieKey","query-key"],["basic"]]');
    const readme = files.get('README.md')!;
    expect(readme).toContain('## Authentication');
    for (const s of ir.securitySchemes) for (const v of Object.values(s.env)) expect(readme).toContain(`\`${v}\``);
    expect(readme).toContain('| `isOptional` | `GET /optional` |  | bearer (optional) |');
    expect(readme).toContain('| `needsBoth` | `GET /both` |  | cookieKey + query-key or basic |');
  });

  it('leave servers without security unchanged: no schemes in config, no Authentication section', () => {
    const { ir } = setup('', SPEC3.replace(/security:\n {2}- api_key: \[\]\n/, '').replace(/ security: \[[^\n]*\], responses/g, ' responses'));
    expect(ir.securitySchemes).toEqual([]);
    const files = emitProject(ir);
    expect(files.get('src/config.gen.ts')).not.toContain('securitySchemes');
    expect(files.get('src/tools.gen.ts')).not.toContain('"security"');
    expect(files.get('README.md')).not.toContain('Authentication');
  });
});
