/**
 * The files that make a generated project ready to ship, checked on the emitted tree: a
 * publishable package.json, the Dockerfile and its ignore file, `.env.example`, `.mcp.json`,
 * the README's client snippets and the MCP Bundle manifest (validated with `@anthropic-ai/mcpb`'s
 * own schema, and with its own substitution of `user_config` values).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { getMcpConfigForManifest, MANIFEST_SCHEMAS } from '@anthropic-ai/mcpb';
import { describe, expect, it } from 'vitest';
import { compile } from '../../src/compile.js';
import { ROOT } from '../helpers/project.js';

async function emit(manifest: string, cwd = ROOT): Promise<Map<string, string>> {
  const r = await compile({ manifestPath: manifest, cwd, emit: true });
  if (!r.files)
    throw new Error(
      r.diagnostics
        .sorted()
        .map((d) => d.message)
        .join('\n'),
    );
  return r.files;
}

/** A manifest in a scratch folder next to a copy of the Petstore spec, with extra YAML. */
async function emitPetstore(extra: string): Promise<Map<string, string>> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'mcpgen-ship-'));
  writeFileSync(path.join(dir, 'mcpgen.yaml'), `name: pets\nopenapi: ${JSON.stringify(path.join(ROOT, 'examples/petstore/openapi.yaml'))}\n${extra}`);
  return emit('mcpgen.yaml', dir);
}

const fixture = emit('test/fixtures/ship/mcpgen.yaml');
const petstore = emit('examples/petstore/mcpgen.yaml');

/** Names `.env.example` lists, active (required) or commented out. */
function envExampleNames(text: string): { all: string[]; active: string[] } {
  const rows = [...text.matchAll(/^(# )?([A-Z][A-Z0-9_]*)=/gm)];
  return { all: rows.map((m) => m[2]!), active: rows.filter((m) => m[1] === undefined).map((m) => m[2]!) };
}

/** The JSON code blocks of a Markdown section, in order. */
function jsonBlocks(markdown: string, heading: string): unknown[] {
  const start = markdown.indexOf(heading);
  const section = markdown.slice(start, markdown.indexOf('\n## ', start + heading.length));
  return [...section.matchAll(/```json\n([\s\S]*?)\n```/g)].map((m) => JSON.parse(m[1]!));
}

const REQUIRED = [
  'SHIPFX_BASE_URL',
  'SHIPFX_APIKEYHEADER_API_KEY',
  'SHIPFX_APIKEYQUERY_API_KEY',
  'SHIPFX_BASICAUTH_USERNAME',
  'SHIPFX_BASICAUTH_PASSWORD',
  'SHIPFX_MY_TOKEN',
  'SHIPFX_CLIENTCREDENTIALS_CLIENT_ID',
  'SHIPFX_CLIENTCREDENTIALS_CLIENT_SECRET',
  'SHIPFX_QUERY',
];

describe('package.json', () => {
  it('is publishable unless package.private says otherwise, with bin, files, engines and description', async () => {
    const pkg = JSON.parse((await petstore).get('package.json')!);
    expect(pkg.private).toBeUndefined();
    expect(pkg).toMatchObject({
      name: 'petstore',
      description: 'Manage the pets of the example pet store.',
      bin: { petstore: 'dist/server.js' },
      files: ['dist', '.env.example'],
      engines: { node: '>=20.19.0' },
    });
    expect(pkg.scripts.prepack).toBe('npm run build');
    const priv = JSON.parse((await emitPetstore('package: { private: true }\n')).get('package.json')!);
    expect(Object.keys(priv).slice(0, 3)).toEqual(['name', 'version', 'private']);
    expect(priv.private).toBe(true);
  });

  it('carries author, license and repository from the manifest', async () => {
    const pkg = JSON.parse((await fixture).get('package.json')!);
    expect(pkg).toMatchObject({
      author: 'Example Maintainers <maintainers@example.com>',
      license: 'MIT',
      repository: { type: 'git', url: 'https://github.com/example/ship-fixture' },
    });
  });
});

describe('Dockerfile', () => {
  for (const [name, files] of [
    ['petstore', petstore],
    ['ship fixture', fixture],
  ] as const) {
    it(`${name}: multi-stage node:20 build, non-root user, COPY sources in the project, the built server as entry`, async () => {
      const tree = await files;
      const lines = tree
        .get('Dockerfile')!
        .split('\n')
        .filter((l) => l.trim() !== '' && !l.startsWith('#'));
      const from = lines.filter((l) => l.startsWith('FROM '));
      expect(from.length).toBeGreaterThanOrEqual(2);
      for (const f of from) expect(f).toMatch(/^FROM node:20(-alpine|-slim)?( AS \w+)?$/);
      const users = lines.filter((l) => l.startsWith('USER '));
      expect(users.at(-1)).toMatch(/^USER (?!root\b|0\b)\w+$/);
      expect(lines.indexOf(users.at(-1)!)).toBeGreaterThan(lines.indexOf(from.at(-1)!));
      const copies = lines.filter((l) => l.startsWith('COPY ') && !l.includes('--from='));
      expect(copies.length).toBeGreaterThan(0);
      for (const copy of copies) {
        for (const source of copy
          .split(/\s+/)
          .slice(1, -1)
          .filter((w) => !w.startsWith('--'))) {
          const re = new RegExp(`^${source.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*')}(/|$)`);
          expect(
            [...tree.keys()].some((f) => re.test(f)),
            `${source} exists in the project`,
          ).toBe(true);
        }
      }
      expect(lines.some((l) => /^RUN .*npm ci\b/.test(l))).toBe(true);
      expect(lines.some((l) => /npm prune --omit=dev/.test(l))).toBe(true);
      const entry = lines.filter((l) => l.startsWith('ENTRYPOINT ') || l.startsWith('CMD ')).at(-1)!;
      const pkg = JSON.parse(tree.get('package.json')!);
      expect(JSON.parse(entry.replace(/^\w+ /, ''))).toEqual(['node', Object.values(pkg.bin)[0]]);
      expect(tree.get('.dockerignore')!.split('\n')).toEqual(expect.arrayContaining(['node_modules', 'dist', '.env']));
    });
  }

  it('serves stdio by default and HTTP on every interface of the container with --transport http', async () => {
    const docker = (await fixture).get('Dockerfile')!;
    expect(docker).toContain('\nENV SHIPFX_HOST=0.0.0.0\nEXPOSE 3000\n');
    expect(docker).toContain('docker run --rm -p 127.0.0.1:3000:3000 --env-file .env ship-fixture --transport http');
    expect(docker).toContain('-e SHIPFX_ALLOWED_HOSTS=mcp.example.com');
  });

  it('puts the reflection store where the unprivileged user may write', async () => {
    const docker = (await emit('examples/petstore-guarded/mcpgen.yaml')).get('Dockerfile')!;
    expect(docker).toContain('ENV PETSTORE_GUARDED_REFLECTION_DIR=/home/node/justifications');
  });
});

describe('.env.example', () => {
  it('lists every variable of the registry once, required ones active, the others commented out with their default', async () => {
    const text = (await fixture).get('.env.example')!;
    const { all, active } = envExampleNames(text);
    expect(new Set(all).size).toBe(all.length);
    expect(active.sort()).toEqual([...REQUIRED].sort());
    expect(all).toEqual(
      expect.arrayContaining([
        'SHIPFX_TIMEOUT_MS',
        'SHIPFX_MAX_RESPONSE_BYTES',
        'SHIPFX_MAX_IN_FLIGHT_BYTES',
        'SHIPFX_LOG_LEVEL',
        'SHIPFX_UPLOAD_ROOT',
        'SHIPFX_REFLECTION_DIR',
      ]),
    );
    expect(text).toContain('# SHIPFX_TIMEOUT_MS=30000\n');
    expect(text).toContain('# Bearer token of security scheme bearerAuth\n# Required, secret\nSHIPFX_MY_TOKEN=\n');
    expect(envExampleNames((await petstore).get('.env.example')!).active).toEqual([]);
  });

  it('keeps spec text inside its comment lines', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'mcpgen-ship-'));
    const scheme = JSON.stringify('evil\nEVIL_INJECTED=1\r\u2028X=2');
    writeFileSync(
      path.join(dir, 'api.yaml'),
      `openapi: 3.0.3\ninfo: { title: t, version: "1" }\nservers: [{ url: "https://x.example.com" }]\ncomponents:\n  securitySchemes:\n    ${scheme}: { type: http, scheme: bearer }\nsecurity: [{ ${scheme}: [] }]\npaths:\n  /a:\n    get:\n      operationId: a\n      responses: { "200": { description: ok } }\n`,
    );
    writeFileSync(path.join(dir, 'mcpgen.yaml'), 'name: evil\nopenapi: ./api.yaml\n');
    const text = (await emit('mcpgen.yaml', dir)).get('.env.example')!;
    const serving = [
      'TRANSPORT',
      'PORT',
      'HOST',
      'ALLOWED_HOSTS',
      'ALLOWED_ORIGINS',
      'ALLOW_ANONYMOUS',
      'HTTP_TOKENS',
      'HTTP_TOKENS_FILE',
      'PUBLIC_URL',
      'OAUTH_ISSUER',
      'OAUTH_AUDIENCE',
      'OAUTH_SCOPES',
      'OAUTH_JWKS_URL',
      'OAUTH_INTROSPECTION_URL',
      'OAUTH_CLIENT_ID',
      'OAUTH_CLIENT_SECRET',
      'CLIENT',
      'STATE_KEY',
      'SESSION_IDLE_MS',
      'MAX_SESSIONS',
      'MAX_SESSIONS_PER_CLIENT',
      'DRAIN_MS',
      'REDIS_URL',
      'REDIS_PREFIX',
      'REDIS_FAIL_OPEN',
      'REDIS_LEASE_MS',
      'REDIS_TIMEOUT_MS',
    ].map((s) => `EVIL_${s}`);
    expect(envExampleNames(text).all).toEqual([
      'EVIL_BASE_URL',
      'EVIL_TIMEOUT_MS',
      'EVIL_MAX_RESPONSE_BYTES',
      'EVIL_MAX_IN_FLIGHT_BYTES',
      'EVIL_MAX_ARGUMENT_BYTES',
      'EVIL_LOG_LEVEL',
      ...serving,
      'EVIL_EVIL_EVIL_INJECTED_1__X_2_TOKEN',
    ]);
    expect(text).toContain('# Bearer token of security scheme evil EVIL_INJECTED=1 X=2\n');
  });
});

describe('client configuration', () => {
  it('.mcp.json starts the built server for Claude Code with every required variable from the environment', async () => {
    const mcp = JSON.parse((await fixture).get('.mcp.json')!);
    expect(mcp.mcpServers['ship-fixture']).toMatchObject({ type: 'stdio', command: 'node', args: ['dist/server.js'] });
    expect(mcp.mcpServers['ship-fixture'].env).toEqual(Object.fromEntries(REQUIRED.map((n) => [n, `\${${n}}`])));
    expect(JSON.parse((await petstore).get('.mcp.json')!).mcpServers.petstore.env).toBeUndefined();
  });

  it('the README shows Claude Desktop, VS Code (servers, inputs for secrets), Cursor and Docker entries with every required variable', async () => {
    const readme = (await fixture).get('README.md')!;
    const [desktop, vscode, cursor, , , , docker] = jsonBlocks(readme, '## Use it from an MCP client') as Array<
      Record<string, Record<string, { env: Record<string, string>; args: string[] }>>
    >;
    expect(Object.keys(desktop!.mcpServers!['ship-fixture']!.env).sort()).toEqual([...REQUIRED].sort());
    expect(Object.keys(vscode!)).toEqual(['inputs', 'servers']);
    const inputs = vscode!.inputs as unknown as Array<{ id: string; password: boolean }>;
    expect(vscode!.servers!['ship-fixture']!.env.SHIPFX_MY_TOKEN).toBe('${input:shipfx_my_token}');
    expect(inputs.find((i) => i.id === 'shipfx_my_token')!.password).toBe(true);
    expect(inputs.find((i) => i.id === 'shipfx_base_url')!.password).toBe(false);
    expect(Object.keys(vscode!.servers!['ship-fixture']!.env).sort()).toEqual([...REQUIRED].sort());
    expect(cursor!.mcpServers!['ship-fixture']!.env.SHIPFX_QUERY).toBe('${env:SHIPFX_QUERY}');
    expect(Object.keys(cursor!.mcpServers!['ship-fixture']!.env).sort()).toEqual([...REQUIRED].sort());
    expect(docker!.mcpServers!['ship-fixture']!.args.filter((a, i, all) => all[i - 1] === '-e').sort()).toEqual([...REQUIRED].sort());
    expect(readme).toContain(
      `claude mcp add ship-fixture ${REQUIRED.map((n) => `-e ${n}=...`).join(' ')} -- node /absolute/path/to/ship-fixture/dist/server.js`,
    );
  });

  it('the README shows HTTP entries for Claude Code, VS Code and Cursor with the token header, and no variables', async () => {
    const readme = (await fixture).get('README.md')!;
    const [, , , claude, vscode, cursor] = jsonBlocks(readme, '## Use it from an MCP client') as Array<Record<string, Record<string, Record<string, unknown>>>>;
    const url = 'http://127.0.0.1:3000/mcp';
    expect(claude!.mcpServers!['ship-fixture']).toEqual({ type: 'http', url, headers: { Authorization: 'Bearer <token>' } });
    expect(vscode!.servers!['ship-fixture']).toEqual({ type: 'http', url, headers: { Authorization: 'Bearer ${input:mcp_token}' } });
    expect(vscode!.inputs).toEqual([{ type: 'promptString', id: 'mcp_token', description: 'Token of this client in SHIPFX_HTTP_TOKENS', password: true }]);
    expect(cursor!.mcpServers!['ship-fixture']).toEqual({ url, headers: { Authorization: 'Bearer <token>' } });
    expect(readme).toContain(`claude mcp add --transport http ship-fixture ${url} --header 'Authorization: Bearer <token>'`);
    const serving = readme.slice(readme.indexOf('## Serving over HTTP'));
    for (const name of [
      '--transport http',
      'SHIPFX_ALLOWED_HOSTS',
      'SHIPFX_ALLOWED_ORIGINS',
      'SHIPFX_HTTP_TOKENS_FILE',
      '/healthz',
      'SIGTERM',
      'SHIPFX_DRAIN_MS',
      'SHIPFX_SESSION_IDLE_MS',
      'SHIPFX_STATE_KEY',
      'SHIPFX_OAUTH_ISSUER',
      'SHIPFX_PUBLIC_URL',
      'oauth-protected-resource',
    ])
      expect(serving).toContain(name);
  });

  it('sends fromClient headers in the HTTP entries, and drops the token header when a scheme takes Authorization', async () => {
    const keyed = async (auth: string) => {
      const dir = mkdtempSync(path.join(os.tmpdir(), 'mcpgen-ship-'));
      writeFileSync(
        path.join(dir, 'api.yaml'),
        'openapi: 3.0.3\ninfo: { title: t, version: "1" }\nservers: [{ url: "https://x.example.com" }]\ncomponents:\n  securitySchemes:\n    api_key: { type: apiKey, in: header, name: X-Key }\nsecurity: [{ api_key: [] }]\npaths:\n  /a:\n    get:\n      operationId: a\n      responses: { "200": { description: ok } }\n',
      );
      writeFileSync(path.join(dir, 'mcpgen.yaml'), `name: pets\nopenapi: ./api.yaml\nauth:\n  api_key: { fromClient: ${auth} }\n`);
      return (await emit('mcpgen.yaml', dir)).get('README.md')!;
    };
    const readme = await keyed('X-Pet-Key');
    const [, , , claude, vscode] = jsonBlocks(readme, '## Use it from an MCP client') as Array<
      Record<string, Record<string, { headers: Record<string, string> }>>
    >;
    expect(claude!.mcpServers!.pets!.headers).toEqual({ Authorization: 'Bearer <token>', 'X-Pet-Key': '<API key>' });
    expect(vscode!.servers!.pets!.headers).toEqual({ Authorization: 'Bearer ${input:mcp_token}', 'X-Pet-Key': '${input:x_pet_key}' });
    expect(readme).toContain('| api\\_key | `X-Pet-Key` |');
    const own = await keyed('Authorization');
    const [, , , ownClaude] = jsonBlocks(own, '## Use it from an MCP client') as Array<Record<string, Record<string, { headers: Record<string, string> }>>>;
    expect(ownClaude!.mcpServers!.pets!.headers).toEqual({ Authorization: '<API key>' });
    expect(own).toContain('this server must run without `PETS_HTTP_TOKENS`');
  });

  it('the README configuration table lists every variable', async () => {
    const tree = await fixture;
    const readme = tree.get('README.md')!;
    const section = readme.slice(readme.indexOf('## Configuration'), readme.indexOf('\n## ', readme.indexOf('## Configuration') + 5));
    const names = [...section.matchAll(/^\| `([A-Z0-9_]+)` \|/gm)].map((m) => m[1]);
    expect(names).toEqual(envExampleNames(tree.get('.env.example')!).all);
  });

  it('prints tool requests as code without markdown escapes (no literal backslash)', async () => {
    const readme = (await emitPetstore('overrides: { getInventory: { name: store_inventory } }\n')).get('README.md')!;
    expect(readme).toContain('| `store_inventory` | `GET /store/inventory` |');
    const snake = await (async () => {
      const dir = mkdtempSync(path.join(os.tmpdir(), 'mcpgen-ship-'));
      writeFileSync(
        path.join(dir, 'api.yaml'),
        'openapi: 3.0.3\ninfo: { title: t, version: "1" }\nservers: [{ url: "https://x.example.com" }]\npaths:\n  /pet_store/{pet_id}:\n    get:\n      operationId: get_pet\n      parameters: [{ name: pet_id, in: path, required: true, schema: { type: string } }]\n      responses: { "200": { description: ok } }\n',
      );
      writeFileSync(path.join(dir, 'mcpgen.yaml'), 'name: snake\nopenapi: ./api.yaml\n');
      return (await emit('mcpgen.yaml', dir)).get('README.md')!;
    })();
    expect(snake).toContain('| `get_pet` | `GET /pet_store/{pet_id}` |');
    expect(snake).not.toContain('\\_');
  });
});

describe('MCP Bundle manifest', () => {
  it('passes the mcpb schema of its manifest_version', async () => {
    for (const files of [await fixture, await petstore]) {
      const manifest = JSON.parse(files.get('manifest.json')!);
      const schema = MANIFEST_SCHEMAS[manifest.manifest_version as keyof typeof MANIFEST_SCHEMAS];
      expect(schema, manifest.manifest_version).toBeDefined();
      expect(schema.safeParse(manifest).error).toBeUndefined();
      expect(manifest.server).toMatchObject({ type: 'node', entry_point: 'dist/server.js' });
    }
  });

  it('asks for every required variable (secrets sensitive) and passes each to the server', async () => {
    const manifest = JSON.parse((await fixture).get('manifest.json')!);
    const userConfig = manifest.user_config as Record<string, { required: boolean; sensitive?: boolean; title: string }>;
    const env = manifest.server.mcp_config.env as Record<string, string>;
    for (const name of REQUIRED) {
      const key = /^\$\{user_config\.([^}]+)\}$/.exec(env[name] ?? '')?.[1];
      expect(key, name).toBeDefined();
      expect(userConfig[key!]).toMatchObject({ required: true, title: name });
      expect(userConfig[key!]!.sensitive === true, name).toBe(name !== 'SHIPFX_BASE_URL');
    }
    // what Claude Desktop does with it: every placeholder replaced, optional ones by their default
    const values = Object.fromEntries(
      Object.keys(userConfig)
        .filter((k) => userConfig[k]!.required)
        .map((k) => [k, `value of ${k}`]),
    );
    const config = await getMcpConfigForManifest({
      manifest,
      extensionPath: '/ext',
      systemDirs: { HOME: '/home/u', DESKTOP: '/d', DOCUMENTS: '/docs', DOWNLOADS: '/dl' },
      userConfig: values,
      pathSeparator: '/',
    });
    expect(config!.args).toEqual(['/ext/dist/server.js']);
    expect(JSON.stringify(config)).not.toContain('${');
    expect(config!.env).toMatchObject({
      SHIPFX_MY_TOKEN: 'value of shipfx_my_token',
      SHIPFX_UPLOAD_ROOT: '',
      SHIPFX_REFLECTION_DIR: '/home/u/.ship-fixture/justifications',
    });
  });

  it('offers the base URL with its default when the server has one', async () => {
    const manifest = JSON.parse((await petstore).get('manifest.json')!);
    expect(manifest.user_config.petstore_base_url).toMatchObject({ required: false, default: 'http://127.0.0.1:4010' });
    expect(Object.values(manifest.user_config as Record<string, { required: boolean }>).filter((u) => u.required)).toEqual([]);
  });

  it('asks for nothing else but the upload root', async () => {
    const manifest = JSON.parse((await fixture).get('manifest.json')!);
    expect(Object.values(manifest.user_config as Record<string, { title: string }>).map((u) => u.title)).toEqual([...REQUIRED, 'SHIPFX_UPLOAD_ROOT']);
  });
});
