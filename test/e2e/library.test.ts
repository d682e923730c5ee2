/**
 * The generated project as a library (`entry: custom`) end to end: test/fixtures/library is built
 * (the first build writes the src/main.ts stub, a second leaves the user's file alone), its
 * main.ts registers a tool, a prompt (only with LIBFX_FEATURE=on), a resource and a resource
 * template in code, and the project is compiled with tsc and served over stdio and Streamable HTTP
 * to the legacy v1 and the 2026-07-28 v2 client: the registered primitives are listed beside the
 * manifest's and work, concern filtering hides them by their `concerns`, the policy's rule
 * (`names: ['flag_*', 'libfx://notes/**']`, matched at run time) refuses them to `reader`, its
 * limit keyed `flag_*` counts the registered tool's calls, the audit trail records them; a duplicate registration stops the start with the seed's message
 * (exit code 1); and another program embeds the server through the package's `createServer`.
 */
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBackend } from '../../examples/petstore/backend.mjs';
import { main } from '../../src/cli/main.js';
import type { AnyClient, Era, HttpProcess, TransportKind } from '../helpers/eras.js';
import { connectClient, ERAS, rpcError, startHttp } from '../helpers/eras.js';
import { ROOT, run } from '../helpers/project.js';

const FIXTURE = path.join(ROOT, 'test/fixtures/library');
const work = path.join(ROOT, '.cache/library-e2e');
const project = path.join(work, 'server');
const TOKENS = { admin: 'admin-token-0123456789abcdef', reader: 'reader-token-0123456789abcdef' };
const CONCERNS_META = 'io.mcpgen/concerns';

type Event = { event: string; primitive?: string; client?: string; outcome?: string };
type Result = { isError?: boolean; content: Array<{ type: string; text?: string }>; structuredContent?: Record<string, unknown> };

let backend: { url: string; server: { close(): void } };
const clients: AnyClient[] = [];
const servers: HttpProcess[] = [];
let stubText = '';

let summary = '';
const build = async (): Promise<void> => {
  summary = '';
  const io = { stdout: (s: string) => void (summary += s), stderr: (s: string) => void process.stderr.write(s), cwd: ROOT };
  expect(await main(['build', path.relative(ROOT, path.join(work, 'mcpgen.yaml')), '--format', 'json'], io)).toBe(0);
};

beforeAll(async () => {
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  cpSync(path.join(FIXTURE, 'mcpgen.yaml'), path.join(work, 'mcpgen.yaml'));
  cpSync(path.join(ROOT, 'examples/petstore/openapi.yaml'), path.join(work, 'openapi.yaml'));
  await build();
  stubText = readFileSync(path.join(project, 'src/main.ts'), 'utf8');
  // the user's file: a later build leaves it alone
  cpSync(path.join(FIXTURE, 'main.ts'), path.join(project, 'src/main.ts'));
  await build();
  await run(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', project]);
  backend = (await startBackend({ port: 0 })) as typeof backend;
}, 180_000);

afterAll(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close().catch(() => undefined)));
  for (const s of servers.splice(0)) s.kill('SIGKILL');
  backend?.server.close();
});

it('reports what the build cannot see only as registered at run time', () => {
  const report = JSON.parse(summary) as { summary: { tools: number; prompts: number; registeredAtRunTime?: boolean } };
  expect(report.summary).toMatchObject({ tools: 1, prompts: 1, registeredAtRunTime: true });
});

it('writes src/main.ts once, as a stub that compiles, and never overwrites it; package.json exports the library', () => {
  expect(stubText).toContain('export async function register(server: LibraryServer): Promise<void> {');
  expect(readFileSync(path.join(project, 'src/main.ts'), 'utf8')).toBe(readFileSync(path.join(FIXTURE, 'main.ts'), 'utf8'));
  const pkg = JSON.parse(readFileSync(path.join(project, 'package.json'), 'utf8')) as Record<string, unknown>;
  expect(pkg.bin).toEqual({ libfx: 'dist/server.js' });
  expect(pkg.exports).toEqual({ '.': { types: './dist/index.d.ts', default: './dist/index.js' } });
  expect(pkg.types).toBe('dist/index.d.ts');
  expect(readFileSync(path.join(project, 'dist/index.d.ts'), 'utf8')).toContain('export declare function createServer(): LibraryServer;');
});

/** A client of `era` over `transport` as `who` (stdio: `LIBFX_CLIENT`; HTTP: its token), with its audit file. */
async function connect(
  era: Era,
  transport: TransportKind,
  who: 'admin' | 'reader',
  env: Record<string, string> = {},
): Promise<{ client: AnyClient; audit: string; stderr: () => string }> {
  const audit = path.join(mkdtempSync(path.join(work, 'audit-')), 'trail.jsonl');
  const base = { LIBFX_BASE_URL: backend.url, LIBFX_AUDIT_FILE: audit, LIBFX_FEATURE: 'on', ...env };
  if (transport === 'stdio') {
    const { client, stderr } = await connectClient({ kind: 'stdio', server: project, env: { ...base, LIBFX_CLIENT: who } }, era);
    clients.push(client);
    return { client, audit, stderr };
  }
  const http = await startHttp(project, { ...base, LIBFX_HTTP_TOKENS: `admin=${TOKENS.admin},reader=${TOKENS.reader}` });
  servers.push(http);
  const { client } = await connectClient({ kind: 'http', url: http.url, headers: { authorization: `Bearer ${TOKENS[who]}` } }, era);
  clients.push(client);
  return { client, audit, stderr: http.stderr };
}

const events = (file: string): Event[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Event);

const lists = async (client: AnyClient, meta?: Record<string, unknown>) => {
  const params = meta ? { _meta: meta } : undefined;
  return {
    tools: (await client.listTools(params)).tools.map((t) => t.name).sort(),
    prompts: (await client.listPrompts(params)).prompts.map((p) => p.name).sort(),
    resources: (await client.listResources(params)).resources.map((r) => r.uri).sort(),
    templates: (await client.listResourceTemplates(params)).resourceTemplates.map((t) => t.uriTemplate).sort(),
  };
};

describe.each(ERAS.flatMap((era) => (['stdio', 'http'] as const).map((transport) => [era, transport] as const)))(
  'registered in code, %s era over %s',
  (era, transport) => {
    it("lists and serves the registered primitives beside the manifest's, filters them by concern, and audits them", async () => {
      const { client, audit, stderr } = await connect(era, transport, 'admin');
      expect(await lists(client)).toEqual({
        tools: ['flag_pet', 'listPets'],
        prompts: ['feature_tour', 'greet'],
        resources: ['libfx://about', 'libfx://notes/today'],
        templates: ['libfx://pets/{name}'],
      });
      // the server logged what the build could not see
      expect(stderr()).toMatch(
        /libfx: registered at run time: 1 tool \(\d+ bytes\), 1 prompt \(\d+ bytes\), 1 resource \(\d+ bytes\), 1 resource template \(\d+ bytes\)/,
      );

      const flagged = (await client.callTool({ name: 'flag_pet', arguments: { pet: 'Rex', times: 2 } })) as Result;
      expect(flagged.isError, JSON.stringify(flagged)).toBeFalsy();
      expect(flagged.structuredContent).toEqual({ text: 'flagged Rex 2x' });
      // the same argument validation as the manifest's tools: the handler never runs
      const invalid = (await client.callTool({ name: 'flag_pet', arguments: { pet: 'Rex', times: 0 } })) as Result;
      expect(invalid.isError).toBe(true);
      expect(invalid.content[0]!.text).toBe('Invalid arguments for tool flag_pet:\n- times: must be >= 1');
      // the policy's limit keyed 'flag_*' (no built tool matches it): two calls a minute per client
      const limited = (await client.callTool({ name: 'flag_pet', arguments: { pet: 'Rex' } })) as Result;
      expect(limited.isError).toBe(true);
      expect(limited.content[0]!.text).toMatch(/perMinute\.perClient/);
      const tour = await client.getPrompt({ name: 'feature_tour', arguments: { topic: 'cats' } });
      expect(tour.messages[0]!.content).toEqual({ type: 'text', text: 'Tour of cats.' });
      expect((await client.getPrompt({ name: 'greet', arguments: { who: 'Ann' } })).messages[0]!.content).toEqual({ type: 'text', text: 'Say hello to Ann.' });
      expect((await client.readResource({ uri: 'libfx://notes/today' })).contents).toEqual([
        { uri: 'libfx://notes/today', mimeType: 'text/plain', text: 'notes of the day' },
      ]);
      expect((await client.readResource({ uri: 'libfx://pets/rex' })).contents).toEqual([{ uri: 'libfx://pets/rex', text: 'card of rex' }]);
      expect((await client.readResource({ uri: 'libfx://about' })).contents[0]).toMatchObject({ text: 'About libfx (declared in the manifest).' });
      expect((await rpcError(client.readResource({ uri: 'libfx://nothing' }))).code).toBe(-32602);

      // concern filtering: risk low hides the tool and the resource mapped to risk high
      expect(await lists(client, { [CONCERNS_META]: { risk: 'low' } })).toEqual({
        tools: ['listPets'],
        prompts: ['feature_tour', 'greet'],
        resources: ['libfx://about'],
        templates: ['libfx://pets/{name}'],
      });
      expect((await lists(client, { [CONCERNS_META]: { risk: 'high' } })).prompts).toEqual(['greet']);

      const trail = events(audit);
      expect(trail.filter((e) => e.primitive === 'flag_pet').map((e) => `${e.event} ${e.outcome ?? ''}`.trim())).toEqual([
        'tool.invoked',
        'tool.completed ok',
        'tool.invoked',
        'tool.failed error',
        'tool.invoked',
        'tool.limited limited',
      ]);
      expect(trail.find((e) => e.event === 'prompt.get' && e.primitive === 'feature_tour')).toMatchObject({ outcome: 'ok', client: 'admin' });
      expect(trail.find((e) => e.event === 'resource.read' && e.primitive === 'libfx://notes/today')).toMatchObject({ outcome: 'ok' });
    }, 60_000);

    it('refuses the registered primitives a policy rule denies, audited; the prompt is registered only with LIBFX_FEATURE=on', async () => {
      const { client, audit } = await connect(era, transport, 'reader', { LIBFX_FEATURE: 'off' });
      expect(await lists(client)).toEqual({ tools: ['listPets'], prompts: ['greet'], resources: ['libfx://about'], templates: ['libfx://pets/{name}'] });
      const refused = await client.callTool({ name: 'flag_pet', arguments: { pet: 'Rex' } }).then(
        (r) => (r as Result).content[0]!.text!,
        (e: unknown) => (e as Error).message,
      );
      expect(refused).toContain('Tool flag_pet is not available to client "reader": the server\'s access policy denies it (policy.access.rules[0].deny)');
      const read = await rpcError(client.readResource({ uri: 'libfx://notes/today' }));
      expect(read.message).toContain('Resource libfx://notes/today is not available to client "reader"');
      expect((await rpcError(client.getPrompt({ name: 'feature_tour', arguments: { topic: 'x' } }))).code).toBe(-32602);
      const trail = events(audit);
      expect(trail.find((e) => e.primitive === 'flag_pet' && e.event === 'tool.denied')).toMatchObject({ client: 'reader', outcome: 'denied' });
      expect(trail.find((e) => e.primitive === 'libfx://notes/today' && e.event === 'resource.read')).toMatchObject({ outcome: 'error' });
    }, 60_000);
  },
);

/** Runs `node <file>` with `env`; resolves with its exit code and stderr. */
function runNode(args: readonly string[], env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...args], {
      cwd: work,
      env: { PATH: process.env.PATH ?? '', LIBFX_AUDIT_FILE: path.join(work, 'dup-audit.jsonl'), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => void (stderr += d.toString('utf8')));
    child.on('exit', (code) => resolve({ code, stderr }));
  });
}

describe('a duplicate registration', () => {
  it.each([
    ['an operation tool', 'listPets'],
    ['an earlier registration', 'flag_pet'],
  ])(
    "of %s stops the start with the seed's message, exit code 1",
    async (_what, name) => {
      const { code, stderr } = await runNode([path.join(project, 'dist/server.js')], { LIBFX_BASE_URL: backend.url, LIBFX_DUPLICATE: name });
      expect(code).toBe(1);
      expect(stderr).toContain(`libfx: cannot start: Tool with name '${name}' already exists`);
      expect(stderr).not.toContain('MCP server on');
    },
    30_000,
  );
});

it('another program embeds the server: createServer() from the package, a registration, serve({ transport: "http" })', async () => {
  const script = path.join(work, 'embed.mjs');
  writeFileSync(
    script,
    `import { createServer } from ${JSON.stringify(path.join(project, 'dist/index.js'))};
const server = createServer();
server.registerTool('embedded_echo', { inputSchema: { type: 'object', properties: { text: { type: 'string' } } } }, ({ text }) => 'echo: ' + text);
try { server.registerPrompt({ name: 'greet', messages: [{ role: 'user', text: 'x' }] }); } catch (err) { process.stderr.write('refused: ' + err.message + '\\n'); }
await server.serve({ transport: 'http', host: '127.0.0.1', port: 0, argv: [] });
`,
  );
  const child = spawn(process.execPath, [script], {
    cwd: work,
    env: { PATH: process.env.PATH ?? '', LIBFX_BASE_URL: backend.url, LIBFX_AUDIT_FILE: path.join(work, 'embed-audit.jsonl') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  try {
    let err = '';
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`not listening; stderr:\n${err}`)), 20_000);
      child.stderr.on('data', (d: Buffer) => {
        err += d.toString('utf8');
        const m = /Streamable HTTP at (http:\/\/\S+?\/mcp)\b/.exec(err);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      });
    });
    expect(err).toContain("refused: Prompt with name 'greet' already exists");
    const { client } = await connectClient({ kind: 'http', url }, 'modern');
    clients.push(client);
    const result = (await client.callTool({ name: 'embedded_echo', arguments: { text: 'hi' } })) as Result;
    expect(result.content).toEqual([{ type: 'text', text: 'echo: hi' }]);
  } finally {
    child.kill('SIGKILL');
  }
}, 60_000);

describe('a reflection gate naming a tool registered in code', () => {
  const gated = path.join(ROOT, '.cache/library-e2e-gated');
  const GOOD = { intent: 'have the staff look at the pet', alternatives: ['do nothing'], choice: 'flag it', confidence: 0.9 };
  beforeAll(async () => {
    rmSync(gated, { recursive: true, force: true });
    mkdirSync(path.join(gated, 'server/src'), { recursive: true });
    // the build cannot see flag_pet: with entry: custom the gate is kept for the tool registered at start
    const manifest =
      readFileSync(path.join(FIXTURE, 'mcpgen.yaml'), 'utf8') +
      '\nreflection:\n  mode: host\n  domains: [pets]\n  gates:\n    flag_pet: { domain: pets, prompt: justify_flag, promptArgs: { pet: "{{pet}}" }, template: "Why flag {{pet}}?" }\n';
    writeFileSync(path.join(gated, 'mcpgen.yaml'), manifest);
    cpSync(path.join(ROOT, 'examples/petstore/openapi.yaml'), path.join(gated, 'openapi.yaml'));
    cpSync(path.join(FIXTURE, 'main.ts'), path.join(gated, 'server/src/main.ts'));
    const io = { stdout: () => undefined, stderr: (s: string) => void process.stderr.write(s), cwd: ROOT };
    expect(await main(['build', path.relative(ROOT, path.join(gated, 'mcpgen.yaml')), '--quiet'], io)).toBe(0);
    await run(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', path.join(gated, 'server')]);
  }, 180_000);

  it.each(ERAS)(
    'runs the registered tool only once the model has justified the call (host flow), %s era',
    async (era) => {
      const env = {
        LIBFX_BASE_URL: backend.url,
        LIBFX_AUDIT_FILE: path.join(gated, `audit-${era}.jsonl`),
        LIBFX_REFLECTION_DIR: path.join(gated, `store-${era}`),
      };
      const { client } = await connectClient({ kind: 'stdio', server: path.join(gated, 'server'), env }, era);
      clients.push(client);
      expect((await client.listPrompts()).prompts.map((p) => p.name)).toContain('justify_flag');
      const first = (await client.callTool({ name: 'flag_pet', arguments: { pet: 'Rex' } })) as Result;
      expect(first.isError).toBe(true);
      const hint = (first.structuredContent ?? JSON.parse(first.content[1]!.text!)) as { hash: string; domain: string; prompt: string };
      expect(hint).toMatchObject({ domain: 'pets', prompt: 'justify_flag' });
      const stored = (await client.callTool({
        name: 'persist_justification',
        arguments: { hash: hint.hash, domain: hint.domain, justification: GOOD },
      })) as Result;
      expect(stored.isError, JSON.stringify(stored)).toBeFalsy();
      const retried = (await client.callTool({ name: 'flag_pet', arguments: { pet: 'Rex' } })) as Result;
      expect(retried.structuredContent).toEqual({ text: 'flagged Rex 1x' });
    },
    60_000,
  );
});

describe('a manifest with no prompts, resources or concerns', () => {
  const plain = path.join(ROOT, '.cache/library-e2e-plain');
  beforeAll(async () => {
    rmSync(plain, { recursive: true, force: true });
    mkdirSync(path.join(plain, 'server/src'), { recursive: true });
    writeFileSync(
      path.join(plain, 'mcpgen.yaml'),
      'name: plainfx\nopenapi: ./openapi.yaml\noutput: ./server\nentry: custom\ninclude: [{ operationId: listPets }]\n',
    );
    cpSync(path.join(ROOT, 'examples/petstore/openapi.yaml'), path.join(plain, 'openapi.yaml'));
    writeFileSync(
      path.join(plain, 'server/src/main.ts'),
      `import type { LibraryServer } from './index.js';
export async function register(server: LibraryServer): Promise<void> {
  server.registerPrompt({ name: 'hello', arguments: [{ name: 'who', required: true }], messages: [{ role: 'user', text: 'Hello {{who}}' }] });
  server.registerResource({ uri: 'plain://readme', name: 'readme', text: 'read me' });
}
`,
    );
    const io = { stdout: () => undefined, stderr: (s: string) => void process.stderr.write(s), cwd: ROOT };
    expect(await main(['build', path.relative(ROOT, path.join(plain, 'mcpgen.yaml')), '--quiet'], io)).toBe(0);
    await run(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', path.join(plain, 'server')]);
  }, 180_000);

  it.each(ERAS)(
    'declares the kinds only registrations bring and serves them, %s era',
    async (era) => {
      const { client } = await connectClient({ kind: 'stdio', server: path.join(plain, 'server'), env: { PLAINFX_BASE_URL: backend.url } }, era);
      clients.push(client);
      const caps = (client as { getServerCapabilities(): Record<string, unknown> | undefined }).getServerCapabilities()!;
      expect(caps.prompts).toBeDefined();
      expect(caps.resources).toBeDefined();
      expect((await client.listPrompts()).prompts.map((p) => p.name)).toEqual(['hello']);
      expect((await client.getPrompt({ name: 'hello', arguments: { who: 'Ann' } })).messages[0]!.content).toEqual({ type: 'text', text: 'Hello Ann' });
      expect((await client.listResources()).resources.map((r) => r.uri)).toEqual(['plain://readme']);
      expect((await client.readResource({ uri: 'plain://readme' })).contents).toEqual([{ uri: 'plain://readme', text: 'read me' }]);
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['listPets']);
    },
    60_000,
  );
});

describe('every project is a library: the Petstore example (no `entry: custom`)', () => {
  const dir = path.join(ROOT, '.cache/library-e2e-default');
  beforeAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    for (const f of ['mcpgen.yaml', 'openapi.yaml']) cpSync(path.join(ROOT, 'examples/petstore', f), path.join(dir, f));
    const io = { stdout: () => undefined, stderr: (s: string) => void process.stderr.write(s), cwd: ROOT };
    expect(await main(['build', path.relative(ROOT, path.join(dir, 'mcpgen.yaml')), '--quiet'], io)).toBe(0);
    await run(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', path.join(dir, 'server')]);
  }, 180_000);

  it('its bin is one main call, and package.json exports createServer with types', () => {
    expect(readFileSync(path.join(dir, 'server/src/server.ts'), 'utf8')).toMatch(/\nawait main\(config, tools\);\n$/);
    const pkg = JSON.parse(readFileSync(path.join(dir, 'server/package.json'), 'utf8')) as { exports: Record<string, Record<string, string>>; types: string };
    expect(pkg.exports['.']).toEqual({ types: './dist/index.d.ts', default: './dist/index.js' });
    expect(readFileSync(path.join(dir, 'server/dist/index.d.ts'), 'utf8')).toContain('export declare function createServer(): LibraryServer;');
  });

  it.each(ERAS)(
    "another program registers a tool (only with its flag on) and serves it beside the operations, %s era; a duplicate throws the seed's message",
    async (era) => {
      const script = path.join(dir, 'embed.mjs');
      writeFileSync(
        script,
        `import { createServer } from ${JSON.stringify(path.join(dir, 'server/dist/index.js'))};
const server = createServer();
if (process.env.EMBED_FEATURE === 'on') server.registerTool('pet_count', { inputSchema: { type: 'object', properties: {} } }, () => 'many');
try { server.registerTool('listPets', { inputSchema: { type: 'object' } }, () => 'x'); } catch (err) { process.stderr.write('refused: ' + err.message + '\\n'); }
await server.serve({ transport: 'http', host: '127.0.0.1', port: 0, argv: [] });
`,
      );
      const child = spawn(process.execPath, [script], {
        cwd: dir,
        env: { PATH: process.env.PATH ?? '', PETSTORE_BASE_URL: backend.url, EMBED_FEATURE: 'on' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      try {
        let err = '';
        const url = await new Promise<string>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`not listening; stderr:\n${err}`)), 20_000);
          child.stderr.on('data', (d: Buffer) => {
            err += d.toString('utf8');
            const m = /Streamable HTTP at (http:\/\/\S+?\/mcp)\b/.exec(err);
            if (m) {
              clearTimeout(timer);
              resolve(m[1]!);
            }
          });
        });
        expect(err).toContain("refused: Tool with name 'listPets' already exists");
        const { client } = await connectClient({ kind: 'http', url }, era);
        clients.push(client);
        const names = (await client.listTools()).tools.map((t) => t.name);
        expect(names).toContain('pet_count');
        expect(names).toContain('listPets');
        expect(((await client.callTool({ name: 'pet_count', arguments: {} })) as Result).content).toEqual([{ type: 'text', text: 'many' }]);
        const pets = (await client.callTool({ name: 'listPets', arguments: {} })) as Result;
        expect(pets.isError).toBeFalsy();
      } finally {
        child.kill('SIGKILL');
      }
    },
    60_000,
  );
});
