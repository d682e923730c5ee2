import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { setLogSink } from '../../../templates/runtime/core/log.js';
import type { PrimitiveGate } from '../../../templates/runtime/core/primitive-gate.js';
import type { OperationTool, ServerConfig } from '../../../templates/runtime/core/types.js';
import { SettingsError } from '../../../templates/runtime/process/settings.js';
import type { CreateServerOptions } from '../../../templates/runtime/server/server.js';
import { createServer } from '../../../templates/runtime/server/server.js';
import { defineTool } from '../../../templates/runtime/tools/extra-tools.js';
import { compiledValidatorCount } from '../../../templates/runtime/validation/validate.js';
import type { AnyClient, Era } from '../../helpers/linked.js';
import { callToolWith, ERAS, linkedClient } from '../../helpers/linked.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');

const config: ServerConfig = {
  name: 'petstore',
  version: '1.2.3',
  instructions: 'Use the pet tools.',
  envPrefix: 'PETSTORE',
  timeoutMs: 5000,
  maxResponseBytes: 100_000,
};

const getPet: OperationTool = {
  kind: 'operation',
  name: 'getPetById',
  title: 'Find pet by ID',
  description: 'Returns a single pet.',
  inputSchema: {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    properties: { petId: { type: 'integer', description: 'ID of pet' } },
    required: ['petId'],
    additionalProperties: false,
  },
  outputSchema: {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    properties: { id: { type: 'integer' }, name: { type: 'string' }, category: { $ref: '#/$defs/Category' } },
    required: ['id', 'name'],
    $defs: { Category: { type: 'object', properties: { id: { type: 'integer' }, parent: { $ref: '#/$defs/Category' } } } },
  },
  annotations: { readOnlyHint: true },
  http: { method: 'GET', path: '/pet/{petId}', params: [{ arg: 'petId', name: 'petId', in: 'path' }] },
  strictOutput: true,
};

/** The same operation as mcpgen publishes it by default: a lenient output schema. */
const getPetLenient: OperationTool = {
  ...getPet,
  name: 'getPetLenient',
  strictOutput: undefined,
  outputSchema: {
    type: 'object',
    properties: {
      id: { anyOf: [{ type: 'number' }, { type: 'null' }] },
      name: { anyOf: [{ type: 'string' }, { type: 'null' }] },
      category: { anyOf: [{ type: 'object' }, { type: 'null' }] },
    },
  },
};

const addPet: OperationTool = {
  kind: 'operation',
  name: 'addPet',
  inputSchema: { type: 'object', properties: { body: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } }, required: ['body'] },
  http: { method: 'POST', path: '/pet', params: [], body: { arg: 'body', contentType: 'application/json' } },
};

const slow: OperationTool = { kind: 'operation', name: 'slow', inputSchema: { type: 'object' }, http: { method: 'GET', path: '/slow', params: [] } };

const tools = [getPet, addPet, slow];

type Seen = { method: string; url: string; body: string };
const seen: Seen[] = [];
let slowClosed: Promise<void> = Promise.resolve();
let signalSlowClosed: () => void = () => undefined;
const http = createHttpServer((req, res) => {
  let body = '';
  req.on('data', (c: Buffer) => (body += c.toString()));
  req.on('end', () => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', body });
    if (req.url === '/v1/pet/7') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"id":7,"name":"Rex","category":{"id":1}}');
    } else if (req.url === '/v1/pet/8') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"id":"eight"}');
    } else if (req.url === '/v1/pet' && req.method === 'POST') {
      res.writeHead(201, { 'content-type': 'application/json' });
      res.end(body);
    } else if (req.url === '/v1/slow') {
      res.on('close', () => signalSlowClosed());
    } else {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('nope');
    }
  });
});
let baseUrl = '';

beforeAll(async () => {
  setLogSink(() => undefined);
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(http.address() as AddressInfo).port}/v1`;
});
afterAll(async () => {
  http.closeAllConnections();
  await new Promise<void>((resolve) => http.close(() => resolve()));
});

const clients: AnyClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  seen.length = 0;
});

/** The error a promise rejects with (or undefined). */
async function rejection(p: Promise<unknown>): Promise<{ code?: number; message: string } | undefined> {
  return p.then(
    () => undefined,
    (e: unknown) => e as { code?: number; message: string },
  );
}

describe.each(ERAS)('createServer in the %s era (in memory)', (era: Era) => {
  async function connect(env: NodeJS.ProcessEnv = { PETSTORE_BASE_URL: baseUrl }): Promise<AnyClient> {
    const factory = createServer(config, tools, env);
    const client = await linkedClient(factory, era);
    clients.push(client);
    return client;
  }
  async function connectWith(options: CreateServerOptions, operationTools: readonly OperationTool[] = tools): Promise<AnyClient> {
    const client = await linkedClient(createServer(config, operationTools, { PETSTORE_BASE_URL: baseUrl }, options), era);
    clients.push(client);
    return client;
  }

  it('identifies itself and sends the instructions', async () => {
    const client = await connect();
    expect(client.getServerVersion()).toMatchObject({ name: 'petstore', version: '1.2.3' });
    expect(client.getInstructions()).toBe('Use the pet tools.');
    expect(client.getServerCapabilities()?.tools).toEqual({});
  });

  it('lists every tool with its schemas verbatim, without compiling validators', async () => {
    const before = compiledValidatorCount();
    const client = await connect();
    const { tools: listed } = await client.listTools();
    expect(listed).toEqual([
      {
        name: 'getPetById',
        title: 'Find pet by ID',
        description: 'Returns a single pet.',
        inputSchema: getPet.inputSchema,
        outputSchema: getPet.outputSchema,
        annotations: { readOnlyHint: true },
      },
      { name: 'addPet', inputSchema: addPet.inputSchema },
      { name: 'slow', inputSchema: { type: 'object' } },
    ]);
    expect(Object.keys(listed[1]!).sort()).toEqual(['inputSchema', 'name']);
    expect(compiledValidatorCount()).toBe(before);
  });

  it('calls a tool end to end and returns structuredContent', async () => {
    const client = await connect();
    const result = await client.callTool({ name: 'getPetById', arguments: { petId: 7 } });
    expect(result).toMatchObject({
      content: [{ type: 'text', text: '{"id":7,"name":"Rex","category":{"id":1}}' }],
      structuredContent: { id: 7, name: 'Rex', category: { id: 1 } },
    });
    expect(result.isError).toBeUndefined();
    expect(seen).toEqual([{ method: 'GET', url: '/v1/pet/7', body: '' }]);
  });

  it('sends bodies end to end', async () => {
    const client = await connect();
    const result = await client.callTool({ name: 'addPet', arguments: { body: { name: 'Tom' } } });
    expect(result.isError).toBeUndefined();
    expect(seen).toEqual([{ method: 'POST', url: '/v1/pet', body: '{"name":"Tom"}' }]);
  });

  it('strict: returns a schema mismatch as an isError result the client accepts', async () => {
    const client = await connect();
    const result = await client.callTool({ name: 'getPetById', arguments: { petId: 8 } });
    expect(result.isError).toBe(true);
    expect(result.content).toEqual([{ type: 'text', text: expect.stringContaining('{"id":"eight"}') }]);
  });

  it('lenient: the same drifting 2xx is a success the client accepts (it validates structuredContent)', async () => {
    const client = await connectWith({}, [...tools, getPetLenient]);
    const result = await client.callTool({ name: 'getPetLenient', arguments: { petId: 8 } });
    expect(result.isError).toBeUndefined();
    expect(result.content).toEqual([{ type: 'text', text: '{"id":"eight"}' }]);
    expect(result.structuredContent).toEqual({ id: null });
  });

  it('returns invalid arguments as an isError result and sends nothing', async () => {
    const client = await connect();
    const result = await client.callTool({ name: 'getPetById', arguments: { petId: 'seven' } });
    expect(result).toMatchObject({ isError: true, content: [{ type: 'text', text: 'Invalid arguments for tool getPetById:\n- petId: must be integer' }] });
    expect(seen).toEqual([]);
  });

  it('rejects an unknown tool with JSON-RPC error -32602', async () => {
    const client = await connect();
    const err = await rejection(client.callTool({ name: 'nope', arguments: {} }));
    expect(err?.code).toBe(ProtocolErrorCode.InvalidParams);
    expect(err?.code).toBe(-32602);
    expect(err?.message).toMatch(/Unknown tool: nope/);
  });

  it('tells which variable to set when there is no base URL', async () => {
    const client = await connect({});
    const result = await client.callTool({ name: 'getPetById', arguments: { petId: 7 } });
    expect(result.isError).toBe(true);
    expect(result.content).toEqual([{ type: 'text', text: expect.stringContaining('PETSTORE_BASE_URL') }]);
  });

  it('aborts the HTTP request when the client cancels the call', async () => {
    slowClosed = new Promise<void>((resolve) => (signalSlowClosed = resolve));
    const client = await connect();
    const controller = new AbortController();
    const call = callToolWith(client, { name: 'slow', arguments: {} }, { signal: controller.signal });
    await new Promise((r) => setTimeout(r, 100));
    expect(seen.map((s) => s.url)).toEqual(['/v1/slow']);
    controller.abort();
    await expect(call).rejects.toThrow();
    await slowClosed; // the server-side fetch was aborted, closing the connection
  });

  it('throws SettingsError for a malformed environment variable', () => {
    expect(() => createServer(config, tools, { PETSTORE_TIMEOUT_MS: 'soon' })).toThrow(SettingsError);
    expect(() => createServer(config, tools, { PETSTORE_TIMEOUT_MS: 'soon' })).toThrow(/PETSTORE_TIMEOUT_MS/);
  });

  it('refuses duplicate tool names', () => {
    expect(() => createServer(config, [getPet, getPet], {})).toThrow(/Duplicate tool name: getPetById/);
    expect(() => createServer(config, [getPet], {}, { extraTools: [defineTool({ ...echo, name: 'getPetById' })] })).toThrow(/Duplicate tool name: getPetById/);
  });
});

const echo = defineTool<{ text: string }, unknown>({
  kind: 'extra',
  name: 'echo',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  handler: (args) => args.text,
});

describe.each(ERAS)('createServer with extensions, %s era', (era: Era) => {
  async function connectWith(options: CreateServerOptions, operationTools: readonly OperationTool[] = tools): Promise<AnyClient> {
    const client = await linkedClient(createServer(config, operationTools, { PETSTORE_BASE_URL: baseUrl }, options), era);
    clients.push(client);
    return client;
  }

  it('lists extra tools after the operation tools and runs them through callExtraTool', async () => {
    const client = await connectWith({ extraTools: [echo] });
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['getPetById', 'addPet', 'slow', 'echo']);
    expect(await client.callTool({ name: 'echo', arguments: { text: 'hi' } })).toMatchObject({ content: [{ type: 'text', text: 'hi' }] });
    expect((await client.callTool({ name: 'echo', arguments: {} })).isError).toBe(true);
    expect(seen).toEqual([]);
  });

  it('merges capabilities, runs install once per server and filters and guards tools with its gate', async () => {
    let installs = 0;
    const gate: PrimitiveGate = {
      visible: (_kind, id) => id !== 'addPet',
      assertAllowed: (_kind, id) => {
        if (id === 'addPet') throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'addPet is hidden');
      },
      decorate: (_kind, id, item) => ({ ...item, _meta: { id } }),
    };
    const options: CreateServerOptions = { extraTools: [echo], capabilities: { tools: { listChanged: true }, prompts: {} }, install: () => (installs++, gate) };
    const client = await connectWith(options);
    expect(client.getServerCapabilities()).toMatchObject({ tools: { listChanged: true }, prompts: {} });
    const listed = (await client.listTools()).tools;
    expect(listed.map((t) => [t.name, t._meta])).toEqual([
      ['getPetById', { id: 'getPetById' }],
      ['slow', { id: 'slow' }],
      ['echo', { id: 'echo' }],
    ]);
    const err = await rejection(client.callTool({ name: 'addPet', arguments: { body: { name: 'x' } } }));
    expect(err?.message).toContain('addPet is hidden');
    expect(seen).toEqual([]);
    const before = installs;
    await connectWith(options);
    // one more instance for the new connection (a modern stdio opening may also make a discovery probe instance)
    expect(installs).toBeGreaterThan(before);
  });

  it("sends an extra tool handler's log lines to the client as logging notifications of the call", async () => {
    const chatty = defineTool<Record<string, never>, unknown>({
      kind: 'extra',
      name: 'chatty',
      inputSchema: { type: 'object' },
      handler: (_args, ctx) => {
        ctx.log('info', 'started');
        ctx.log('warn', 'half way', { step: 2 });
        return 'done';
      },
    });
    const messages: unknown[] = [];
    const client = await linkedClient(createServer(config, tools, { PETSTORE_BASE_URL: baseUrl }, { extraTools: [chatty] }), era, {
      setup: (c) => {
        const onMessage = (n: { params: unknown }) => void messages.push(n.params);
        if (era === 'legacy')
          (c as { setNotificationHandler: (s: unknown, h: typeof onMessage) => void }).setNotificationHandler(LoggingMessageNotificationSchema, onMessage);
        else (c as { setNotificationHandler: (m: string, h: typeof onMessage) => void }).setNotificationHandler('notifications/message', onMessage);
      },
    });
    clients.push(client);
    // the modern era has no logging/setLevel: the level rides the request's _meta
    const params =
      era === 'legacy' ? { name: 'chatty', arguments: {} } : { name: 'chatty', arguments: {}, _meta: { 'io.modelcontextprotocol/logLevel': 'debug' } };
    expect(await client.callTool(params)).toMatchObject({ content: [{ type: 'text', text: 'done' }] });
    const deadline = Date.now() + 2000;
    while (messages.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(messages).toEqual([
      { level: 'info', logger: 'chatty', data: 'started' },
      { level: 'warning', logger: 'chatty', data: { message: 'half way', data: { step: 2 } } },
    ]);
  });

  it("sends an extra tool handler's progress when the call asks for it", async () => {
    const slowly = defineTool<Record<string, never>, unknown>({
      kind: 'extra',
      name: 'slowly',
      inputSchema: { type: 'object' },
      handler: (_args, ctx) => {
        for (const p of [0, 50, 100]) ctx.progress(p, 100, `at ${p}`);
        return 'done';
      },
    });
    const client = await linkedClient(createServer(config, tools, { PETSTORE_BASE_URL: baseUrl }, { extraTools: [slowly] }), era);
    clients.push(client);
    const seenProgress: unknown[] = [];
    const result = await callToolWith(client, { name: 'slowly', arguments: {} }, { onprogress: (p: unknown) => void seenProgress.push(p) });
    expect(result).toMatchObject({ content: [{ type: 'text', text: 'done' }] });
    expect(seenProgress).toEqual([
      { progress: 0, total: 100, message: 'at 0' },
      { progress: 50, total: 100, message: 'at 50' },
      { progress: 100, total: 100, message: 'at 100' },
    ]);
  });

  it('declares no tools capability when there is no tool at all', async () => {
    const client = await connectWith({ capabilities: { prompts: {} } }, []);
    expect(client.getServerCapabilities()?.tools).toBeUndefined();
    expect(client.getServerCapabilities()?.prompts).toEqual({});
  });
});

describe('main over stdio (child process)', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'mcpgen-runtime-'));
  const script = path.join(dir, 'main.mts');
  writeFileSync(
    script,
    `import { main } from ${JSON.stringify(pathToFileURL(path.join(ROOT, 'templates/runtime/main.ts')).href)};\n` +
      `await main(${JSON.stringify(config)}, ${JSON.stringify(tools)});\n`,
  );
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  type Child = {
    stdout: string[];
    stderr: () => string;
    exit: Promise<number | null>;
    send: (msg: unknown) => void;
    end: () => void;
    kill: (s: NodeJS.Signals) => void;
    waitStderr: (re: RegExp) => Promise<void>;
  };

  function start(env: NodeJS.ProcessEnv): Child {
    const child = spawn(process.execPath, ['--import', 'tsx', script], { cwd: ROOT, env: { PATH: process.env.PATH, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let err = '';
    let out = '';
    const lines: string[] = [];
    const waiters: Array<() => void> = [];
    child.stderr.on('data', (c: Buffer) => {
      err += c.toString();
      waiters.forEach((w) => w());
    });
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      const parts = out.split('\n');
      out = parts.pop() ?? '';
      lines.push(...parts);
      waiters.forEach((w) => w());
    });
    const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    return {
      stdout: lines,
      stderr: () => err,
      exit,
      send: (msg) => child.stdin.write(JSON.stringify(msg) + '\n'),
      end: () => child.stdin.end(),
      kill: (s) => child.kill(s),
      waitStderr: (re) =>
        new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`timed out waiting for ${re} in stderr: ${err}`)), 20_000);
          const check = (): void => {
            if (re.test(err)) {
              clearTimeout(timer);
              resolve();
            }
          };
          waiters.push(check);
          check();
        }),
    };
  }

  it('serves over stdio, logs one start-up line to stderr only, and exits 0 when stdin closes', async () => {
    const child = start({ PETSTORE_BASE_URL: baseUrl });
    await child.waitStderr(/MCP server on stdio/);
    child.send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    });
    child.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    child.send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    child.send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'getPetById', arguments: { petId: 7 } } });
    const deadline = Date.now() + 20_000;
    while (child.stdout.length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    child.end();
    expect(await child.exit).toBe(0);
    const messages = child.stdout.map((l) => JSON.parse(l) as { id: number; result: Record<string, unknown> });
    expect(messages.map((m) => m.id)).toEqual([1, 2, 3]);
    expect(messages[0]!.result.serverInfo).toEqual({ name: 'petstore', version: '1.2.3' });
    expect((messages[1]!.result.tools as unknown[]).length).toBe(3);
    expect(messages[2]!.result.structuredContent).toEqual({ id: 7, name: 'Rex', category: { id: 1 } });
    const startup = child
      .stderr()
      .split('\n')
      .filter((l) => l.includes('MCP server on stdio'));
    expect(startup).toHaveLength(1);
    expect(startup[0]).toContain(`petstore 1.2.3: MCP server on stdio with 3 tools; base URL ${baseUrl}`);
  });

  it('warns when the base URL is unset and exits 0 on SIGTERM', async () => {
    const child = start({});
    await child.waitStderr(/MCP server on stdio/);
    expect(child.stderr()).toMatch(/WARN .*PETSTORE_BASE_URL is not set/);
    child.kill('SIGTERM');
    expect(await child.exit).toBe(0);
    expect(child.stdout).toEqual([]);
  });

  it('exits 1 with a message naming the variable when a setting is malformed', async () => {
    const child = start({ PETSTORE_BASE_URL: 'not a url' });
    expect(await child.exit).toBe(1);
    expect(child.stderr()).toMatch(/ERROR petstore: cannot start: PETSTORE_BASE_URL must be an absolute http:\/\/ or https:\/\/ URL/);
    expect(child.stdout).toEqual([]);
  });
});
