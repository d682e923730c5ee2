import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { setLogSink } from '../../../templates/runtime/core/log.js';
import type { HttpOperation, JsonSchema, OperationTool } from '../../../templates/runtime/core/types.js';
import { DRAIN_BYTES } from '../../../templates/runtime/operation/body.js';
import { sendOperation } from '../../../templates/runtime/operation/operation-call.js';
import { DEFAULT_RESULT_POLICY } from '../../../templates/runtime/operation/results.js';
import type { ToolCall } from '../../../templates/runtime/pipeline/pipeline.js';
import { checkArguments } from '../../../templates/runtime/pipeline/pipeline.js';
import type { Settings } from '../../../templates/runtime/process/settings.js';
import { callArguments } from '../../../templates/runtime/server/instance.js';

type Recorded = { method: string; url: string; headers: IncomingHttpHeaders; body: Buffer };
type Route = (req: IncomingMessage, res: ServerResponse) => void;

const requests: Recorded[] = [];
const routes = new Map<string, Route>();
let base = '';
let port = 0;
const http = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) });
    const route = routes.get(new URL(req.url ?? '/', 'http://x').pathname.replace(/^\/api/, ''));
    if (route) route(req, res);
    else {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{"message":"no such route"}');
    }
  });
});

beforeAll(async () => {
  setLogSink(() => undefined);
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  port = (http.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}/api`;
});
afterAll(async () => {
  http.closeAllConnections();
  await new Promise<void>((resolve) => http.close(() => resolve()));
});
beforeEach(() => {
  requests.length = 0;
  routes.clear();
});

function settings(extra: Partial<Settings> = {}): Settings {
  return { baseUrl: base, timeoutMs: 5000, maxResponseBytes: 100_000, envPrefix: 'PETS', ...extra };
}

function tool(http: HttpOperation, inputSchema: JsonSchema = { type: 'object' }, outputSchema?: JsonSchema): OperationTool {
  const t: OperationTool = { kind: 'operation', name: 'testTool', inputSchema, http };
  return outputSchema ? { ...t, outputSchema } : t;
}

function reply(status: number, contentType: string | undefined, body: string | Buffer): Route {
  return (_req, res) => {
    res.writeHead(status, contentType ? { 'content-type': contentType } : {});
    res.end(body);
  };
}

function text(result: CallToolResult): string {
  const first = result.content[0];
  if (first?.type !== 'text') throw new Error(`expected text content, got ${JSON.stringify(result)}`);
  return first.text;
}

const getPet = tool(
  {
    method: 'GET',
    path: '/pets/{petId}',
    params: [
      { arg: 'petId', name: 'petId', in: 'path' },
      { arg: 'token', name: 'token', in: 'query' },
    ],
  },
  { type: 'object', required: ['petId'], properties: { petId: { type: 'integer' }, token: { type: 'string' } }, additionalProperties: false },
);

const petSchema: JsonSchema = { type: 'object', required: ['id', 'name'], properties: { id: { type: 'integer' }, name: { type: 'string' } } };
/** `outputSchemas: strict`: the spec's schema, and a mismatch is an error. */
const getPetTyped: OperationTool = { ...getPet, outputSchema: petSchema, strictOutput: true };
/** The default, `lenient`: what mcpgen publishes for the same response. */
const nullable = (type: string): JsonSchema => ({ anyOf: [{ type }, { type: 'null' }] });
const lenientPet: JsonSchema = {
  type: 'object',
  properties: { id: nullable('number'), name: nullable('string'), tags: { anyOf: [{ type: 'array', items: nullable('string') }, { type: 'null' }] } },
};
const getPetLenient: OperationTool = { ...getPet, name: 'getPetLenient', outputSchema: lenientPet };
/** A lenient tool whose results are not always objects: `{status, data}`. */
const listPets: OperationTool = {
  ...getPet,
  name: 'listPets',
  resultShape: 'wrapped',
  outputSchema: { type: 'object', properties: { status: { type: 'integer' }, data: { anyOf: [{ type: 'array', items: lenientPet }, { type: 'null' }] } } },
};

/** A call as the server makes it: the envelope read (instance.ts), the arguments checked once by the pipeline's step, then the operation. */
function viaPipeline(t: OperationTool, raw: unknown, s: Settings): Promise<CallToolResult> {
  const args = callArguments(t.name, raw);
  return checkArguments({ target: { kind: 'operation', tool: t }, args } as unknown as ToolCall, () => sendOperation(t, args, s)).then(
    (outcome) => outcome.result as CallToolResult,
  );
}

describe('validation and configuration', () => {
  it('refuses invalid arguments without sending a request', async () => {
    const result = await viaPipeline(getPet, { petId: 'x', extra: 1 }, settings());
    expect(result.isError).toBe(true);
    expect(text(result)).toBe('Invalid arguments for tool testTool:\n- extra: is not an accepted argument\n- petId: must be integer');
    expect(requests).toEqual([]);
  });

  it('treats missing arguments as {} (and reports required ones)', async () => {
    const result = await viaPipeline(getPet, undefined, settings());
    expect(text(result)).toBe('Invalid arguments for tool testTool:\n- petId: is required');
    expect(requests).toEqual([]);
  });

  it('refuses non-object arguments even when the schema allows them', async () => {
    expect(() => viaPipeline(tool({ method: 'GET', path: '/x', params: [] }, {}), [1, 2], settings())).toThrow(
      /arguments must be an object of argument values, not an array/,
    );
    expect(requests).toEqual([]);
  });

  it('says which variable to set when no base URL is configured', async () => {
    const result = (await sendOperation(getPet, { petId: 1 }, { timeoutMs: 1000, maxResponseBytes: 1000, envPrefix: 'PETS' })).result;
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/PETS_BASE_URL/);
    expect(requests).toEqual([]);
  });

  it('turns an unsafe path value into an isError result, sending nothing', async () => {
    const t = tool({ method: 'DELETE', path: '/files/{name}', params: [{ arg: 'name', name: 'name', in: 'path' }] });
    const result = (await sendOperation(t, { name: '..' }, settings())).result;
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/^Invalid arguments for tool testTool: Path parameter name must not be "\." or "\.\."/);
    expect(requests).toEqual([]);
  });
});

describe('requests and successful responses', () => {
  it('sends the request and returns JSON text', async () => {
    routes.set('/pets/7', reply(200, 'application/json; charset=utf-8', '{"id":7,"name":"Rex"}'));
    const result = (await sendOperation(getPet, { petId: 7, token: 'a b' }, settings())).result;
    expect(result).toEqual({ content: [{ type: 'text', text: '{"id":7,"name":"Rex"}' }] });
    expect(requests).toHaveLength(1);
    expect(requests[0]!.method).toBe('GET');
    expect(requests[0]!.url).toBe('/api/pets/7?token=a%20b');
    expect(requests[0]!.headers.accept).toBe('application/json, */*;q=0.8');
  });

  it('sends hostile path values inside their segment', async () => {
    const t = tool({ method: 'GET', path: '/files/{name}', params: [{ arg: 'name', name: 'name', in: 'path' }] });
    (await sendOperation(t, { name: '../admin' }, settings())).result;
    (await sendOperation(t, { name: 'a/b?c' }, settings())).result;
    expect(requests.map((r) => r.url)).toEqual(['/api/files/..%2Fadmin', '/api/files/a%2Fb%3Fc']);
  });

  it('sends JSON bodies with their content type', async () => {
    routes.set('/pets', reply(201, 'application/json', '{"id":1,"name":"Rex"}'));
    const t = tool({
      method: 'POST',
      path: '/pets',
      params: [{ arg: 'X-Trace', name: 'X-Trace', in: 'header' }],
      body: { arg: 'body', contentType: 'application/json' },
    });
    const result = (await sendOperation(t, { body: { name: 'Rex' }, 'X-Trace': 'abc' }, settings())).result;
    expect(result.isError).toBeUndefined();
    expect(requests[0]!.method).toBe('POST');
    expect(requests[0]!.headers['content-type']).toBe('application/json');
    expect(requests[0]!.headers['x-trace']).toBe('abc');
    expect(JSON.parse(requests[0]!.body.toString())).toEqual({ name: 'Rex' });
  });

  it('sends binary bodies decoded from base64', async () => {
    routes.set('/upload', reply(200, 'text/plain', 'stored'));
    const t = tool({ method: 'PUT', path: '/upload', params: [], body: { arg: 'data', contentType: 'application/octet-stream' } });
    const bytes = Buffer.from([0, 255, 1, 128]);
    const result = (await sendOperation(t, { data: bytes.toString('base64') }, settings())).result;
    expect(text(result)).toBe('stored');
    expect(requests[0]!.body.equals(bytes)).toBe(true);
    expect(requests[0]!.headers['content-type']).toBe('application/octet-stream');
  });

  it('adds structuredContent when the body matches the output schema', async () => {
    routes.set('/pets/7', reply(200, 'application/json', '{"id":7,"name":"Rex"}'));
    const result = (await sendOperation(getPetTyped, { petId: 7 }, settings())).result;
    expect(result).toEqual({ content: [{ type: 'text', text: '{"id":7,"name":"Rex"}' }], structuredContent: { id: 7, name: 'Rex' } });
  });

  it('returns isError with the body and the mismatches when the output schema does not match', async () => {
    routes.set('/pets/7', reply(200, 'application/problem+json', '{"id":"seven"}'));
    const result = (await sendOperation(getPetTyped, { petId: 7 }, settings())).result;
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toBeUndefined();
    expect(text(result)).toBe('{"id":"seven"}\n\n[note: the response does not match the tool\'s output schema:\n- name: is required\n- id: must be integer]');
  });

  it('returns isError when a tool with an output schema gets a non-object or invalid JSON', async () => {
    routes.set('/pets/1', reply(200, 'application/json', '[1,2]'));
    routes.set('/pets/2', reply(200, 'application/json', '{oops'));
    const arr = (await sendOperation(getPetTyped, { petId: 1 }, settings())).result;
    expect(arr.isError).toBe(true);
    expect(text(arr)).toMatch(/^\[1,2\]\n\n\[note: the response is not a JSON object/);
    const bad = (await sendOperation(getPetTyped, { petId: 2 }, settings())).result;
    expect(bad.isError).toBe(true);
    expect(text(bad)).toMatch(/^\{oops\n\n\[note: the response is not valid JSON/);
    // without an output schema the same bodies are plain successes
    expect((await sendOperation(getPet, { petId: 2 }, settings())).result).toEqual({ content: [{ type: 'text', text: '{oops' }] });
  });

  it('reports 204 as "HTTP 204 No Content"', async () => {
    routes.set('/pets/3', (_req, res) => {
      res.writeHead(204);
      res.end();
    });
    expect((await sendOperation(getPet, { petId: 3 }, settings())).result).toEqual({ content: [{ type: 'text', text: 'HTTP 204 No Content' }] });
  });

  it('returns text bodies as text', async () => {
    routes.set('/pets/4', reply(200, 'text/csv', 'id,name\n4,Rex'));
    expect((await sendOperation(getPet, { petId: 4 }, settings())).result).toEqual({ content: [{ type: 'text', text: 'id,name\n4,Rex' }] });
  });

  it('returns images as image content', async () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0]);
    routes.set('/pets/5', reply(200, 'image/png', png));
    expect((await sendOperation(getPet, { petId: 5 }, settings())).result).toEqual({
      content: [{ type: 'image', data: png.toString('base64'), mimeType: 'image/png' }],
    });
    // the media type as core/media-type.ts reads it everywhere: base type, lower case, no parameters
    routes.set('/pets/5', reply(200, 'Image/PNG; charset=binary', png));
    expect((await sendOperation(getPet, { petId: 5 }, settings())).result).toEqual({
      content: [{ type: 'image', data: png.toString('base64'), mimeType: 'image/png' }],
    });
  });

  it('returns other binary bodies as a blob resource whose URI has no query', async () => {
    const pdf = Buffer.from('%PDF-1.4\x00\xff binary');
    routes.set('/pets/6', reply(200, 'application/pdf', pdf));
    const result = (await sendOperation(getPet, { petId: 6, token: 'secret' }, settings())).result;
    expect(result).toEqual({ content: [{ type: 'resource', resource: { uri: `${base}/pets/6`, mimeType: 'application/pdf', blob: pdf.toString('base64') } }] });
  });

  it('uses the fetch passed in the options', async () => {
    const calls: string[] = [];
    const fakeFetch: typeof fetch = async (input) => {
      calls.push(String(input));
      return new Response('{"id":9,"name":"Fake"}', { status: 200, headers: { 'content-type': 'application/json' } });
    };
    const result = (await sendOperation(getPetTyped, { petId: 9 }, settings({ baseUrl: 'http://fake.test' }), { fetch: fakeFetch })).result;
    expect(calls).toEqual(['http://fake.test/pets/9']);
    expect(result.structuredContent).toEqual({ id: 9, name: 'Fake' });
  });
});

describe('the HTTP status returned with the result', () => {
  it('returns the status of the response (success or error), and none when nothing was sent', async () => {
    routes.set('/pets/7', reply(200, 'application/json', '{"id":7}'));
    routes.set('/pets/8', reply(404, 'text/plain', 'no such pet'));
    expect(await sendOperation(getPet, { petId: 7 }, settings())).toMatchObject({ status: 200, result: { content: [{ type: 'text', text: '{"id":7}' }] } });
    const missing = await sendOperation(getPet, { petId: 8 }, settings());
    expect(missing.status).toBe(404);
    expect(missing.result.isError).toBe(true);
    const unsent = await sendOperation(getPet, { petId: 1 }, { timeoutMs: 1000, maxResponseBytes: 1000, envPrefix: 'PETS' });
    expect(unsent).not.toHaveProperty('status');
    expect(unsent.result.isError).toBe(true);
  });

  it('hands the status to the caller when the headers arrive, before the body is read (a call ended early still has it)', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const body = new ReadableStream<Uint8Array>({
      async start(controller) {
        await held;
        controller.enqueue(new TextEncoder().encode('{"id":5}'));
        controller.close();
      },
    });
    const seen: { httpStatus?: number } = {};
    const fakeFetch: typeof fetch = async () => new Response(body, { status: 200, headers: { 'content-type': 'application/json' } });
    const pending = sendOperation(getPet, { petId: 5 }, settings({ baseUrl: 'http://fake.test' }), {
      fetch: fakeFetch,
      onStatus: (status) => {
        seen.httpStatus = status;
      },
    });
    await vi.waitFor(() => expect(seen.httpStatus).toBe(200));
    release();
    expect((await pending).status).toBe(200);
  });
});

describe('strict output schemas: every kind of body', () => {
  it('answers each with the data and why it does not fit (empty, text, invalid JSON, not an object, a mismatch, too large, binary)', async () => {
    const answers: Record<string, () => Response> = {
      '1': () => new Response(null, { status: 204 }),
      '2': () => new Response('plain words', { headers: { 'content-type': 'text/plain' } }),
      '3': () => new Response('{"id":', { headers: { 'content-type': 'application/json' } }),
      '4': () => new Response('[1]', { headers: { 'content-type': 'application/json' } }),
      '5': () => new Response('{"id":"seven"}', { headers: { 'content-type': 'application/json' } }),
      '6': () => new Response(`{"id":7,"name":"${'x'.repeat(2000)}"}`, { headers: { 'content-type': 'application/json' } }),
      '7': () => new Response(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1]), { headers: { 'content-type': 'image/png' } }),
      '8': () => new Response('{"id":7,"name":"Rex"}', { headers: { 'content-type': 'application/json' } }),
    };
    const fetchOf: typeof fetch = async (input) => answers[String(input).split('/').pop()!]!();
    const call = (id: number) =>
      sendOperation(getPetTyped, { petId: id }, settings({ baseUrl: 'http://fake.test', maxResponseBytes: 1000 }), { fetch: fetchOf }).then((o) => o.result);
    const notes = await Promise.all([1, 2, 3, 4, 5, 6].map(async (id) => text(await call(id)).split('[note: ')[1]));
    expect(notes).toEqual([
      'the tool declares an output schema but the response has no body]',
      'the response is not JSON, so it has no structured content]',
      'the response is not valid JSON, so it cannot be checked against the output schema]',
      'the response is not a JSON object, as the output schema requires]',
      "the response does not match the tool's output schema:\n- name: is required\n- id: must be integer]",
      'the response exceeds the limit of 1000 bytes, so it was not parsed; raise PETS_MAX_RESPONSE_BYTES to receive it]',
    ]);
    for (const id of [1, 2, 3, 4, 5, 6]) expect((await call(id)).isError).toBe(true);
    const image = await call(7);
    expect(image).toEqual({
      content: [
        { type: 'image', data: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1]).toString('base64'), mimeType: 'image/png' },
        { type: 'text', text: '[note: the tool declares an output schema but the response is image/png]' },
      ],
      isError: true,
    });
    expect(Object.keys(image)).toEqual(['content', 'isError']);
    expect(await call(8)).toEqual({ content: [{ type: 'text', text: '{"id":7,"name":"Rex"}' }], structuredContent: { id: 7, name: 'Rex' } });
  });
});

describe('errors', () => {
  it('returns non-2xx responses as isError with status and body', async () => {
    routes.set('/pets/8', reply(404, 'application/json', '{"message":"Pet not found"}'));
    const result = (await sendOperation(getPet, { petId: 8 }, settings())).result;
    expect(result).toEqual({ isError: true, content: [{ type: 'text', text: 'HTTP 404 Not Found\n{"message":"Pet not found"}' }] });
    routes.set('/pets/9', reply(503, undefined, ''));
    expect(text((await sendOperation(getPet, { petId: 9 }, settings())).result)).toBe('HTTP 503 Service Unavailable');
  });

  it('times out against a server that never answers', async () => {
    routes.set('/pets/10', () => undefined);
    // the route never answers: only the 200 ms timeout can end the call (no timed assertion)
    const result = (await sendOperation(getPet, { petId: 10, token: 'secret' }, settings({ timeoutMs: 200 }))).result;
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(new RegExp(`^Request to 127\\.0\\.0\\.1:${port} timed out after 200 ms \\(GET /api/pets/10\\)`));
    expect(text(result)).toMatch(/PETS_TIMEOUT_MS/);
    expect(text(result)).not.toMatch(/secret/);
  });

  it('times out while the body is still streaming', async () => {
    routes.set('/pets/11', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('partial');
    });
    const result = (await sendOperation(getPet, { petId: 11 }, settings({ timeoutMs: 300 }))).result;
    expect(text(result)).toMatch(/timed out after 300 ms/);
  });

  it('reports cancellation by the caller', async () => {
    routes.set('/pets/12', () => undefined);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const result = (await sendOperation(getPet, { petId: 12 }, settings(), { signal: controller.signal })).result;
    expect(text(result)).toMatch(/^Request to 127\.0\.0\.1:\d+ was cancelled/);
  });

  it('reports a refused connection with host and code, never the query', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const deadPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const result = (await sendOperation(getPet, { petId: 1, token: 's3cret' }, settings({ baseUrl: `http://127.0.0.1:${deadPort}` }))).result;
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(new RegExp(`^Request to 127\\.0\\.0\\.1:${deadPort} failed \\(GET /pets/1\\): ECONNREFUSED`));
    expect(text(result)).not.toMatch(/s3cret/);
  });

  it('reports an unresolvable host', async () => {
    // what undici throws for a failed DNS lookup (simulated: tests send nothing off this machine)
    const dnsFailure: typeof fetch = async () => {
      throw new TypeError('fetch failed', { cause: Object.assign(new Error('getaddrinfo ENOTFOUND no-such-host.invalid'), { code: 'ENOTFOUND' }) });
    };
    const result = (await sendOperation(getPet, { petId: 1 }, settings({ baseUrl: 'http://no-such-host.invalid' }), { fetch: dnsFailure })).result;
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/^Request to no-such-host\.invalid failed \(GET \/pets\/1\): (ENOTFOUND|EAI_AGAIN)/);
  });
});

describe('robustness', () => {
  it('never rejects: odd fetch failures and a broken output schema become isError results', async () => {
    const throwing: typeof fetch = async () => {
      throw 'not an Error';
    };
    const r1 = (await sendOperation(getPet, { petId: 1, token: 'k' }, settings({ baseUrl: 'http://fake.test' }), { fetch: throwing })).result;
    expect(r1).toEqual({ isError: true, content: [{ type: 'text', text: 'Request to fake.test failed (GET /pets/1): unknown error' }] });

    const ok: typeof fetch = async () => new Response('{"id":1}', { headers: { 'content-type': 'application/json' } });
    const broken: OperationTool = {
      ...getPet,
      name: 'brokenOut',
      strictOutput: true,
      outputSchema: { type: 'object', properties: { id: { $ref: '#/$defs/Nope' } } },
    };
    const r2 = (await sendOperation(broken, { petId: 1 }, settings({ baseUrl: 'http://fake.test' }), { fetch: ok })).result;
    expect(r2.isError).toBe(true);
    expect(text(r2)).toMatch(/^\{"id":1\}\n\n\[note: The output schema of tool brokenOut cannot be compiled/);
    // lenient: still a success, the data in the text (the schema problem goes to the log)
    const r3 = (
      await sendOperation({ ...broken, name: 'brokenLenient', strictOutput: undefined }, { petId: 1 }, settings({ baseUrl: 'http://fake.test' }), {
        fetch: ok,
      })
    ).result;
    expect(r3).toEqual({ content: [{ type: 'text', text: '{"id":1}' }], structuredContent: {} });
  });

  it('redacts the query from error causes that quote the URL', async () => {
    const quoting: typeof fetch = async (input) => {
      throw new TypeError('fetch failed', { cause: Object.assign(new Error(`bad thing at ${String(input)}`), { code: 'E_ODD' }) });
    };
    const result = (await sendOperation(getPet, { petId: 1, token: 's3cret' }, settings({ baseUrl: 'http://fake.test' }), { fetch: quoting })).result;
    expect(text(result)).toBe('Request to fake.test failed (GET /pets/1): E_ODD (bad thing at http://fake.test/pets/1)');
  });
});

describe('response size limit', () => {
  it('truncates text with a marker giving the declared size', async () => {
    routes.set('/pets/20', reply(200, 'text/plain', 'x'.repeat(1000)));
    const result = (await sendOperation(getPet, { petId: 20 }, settings({ maxResponseBytes: 100 }))).result;
    expect(text(result)).toBe('x'.repeat(100) + '\n[truncated: showing first 100 of 1000 bytes]');
  });

  it('counts the full size of a chunked body while draining', async () => {
    routes.set('/pets/21', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      for (let i = 0; i < 10; i++) res.write('y'.repeat(100));
      res.end();
    });
    const result = (await sendOperation(getPet, { petId: 21 }, settings({ maxResponseBytes: 150 }))).result;
    expect(requests).toHaveLength(1);
    expect(text(result)).toBe('y'.repeat(150) + '\n[truncated: showing first 150 of 1000 bytes]');
  });

  it('stops draining a huge chunked body and says "more than"', async () => {
    let closedEarly = false;
    routes.set('/pets/22', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const chunk = 'z'.repeat(64 * 1024);
      let sent = 0;
      const pump = (): void => {
        while (sent < DRAIN_BYTES * 4) {
          sent += chunk.length;
          if (!res.write(chunk)) {
            res.once('drain', pump);
            return;
          }
        }
        res.end();
      };
      res.on('close', () => {
        closedEarly = sent < DRAIN_BYTES * 4;
      });
      pump();
    });
    const result = (await sendOperation(getPet, { petId: 22 }, settings({ maxResponseBytes: 10 }))).result;
    expect(text(result)).toMatch(/^z{10}\n\[truncated: showing first 10 of more than \d+ bytes\]$/);
    const more = Number(/more than (\d+)/.exec(text(result))![1]);
    expect(more).toBeGreaterThanOrEqual(DRAIN_BYTES);
    expect(more).toBeLessThan(DRAIN_BYTES * 4);
    await new Promise((r) => setTimeout(r, 100));
    expect(closedEarly).toBe(true);
  });

  it('does not split a UTF-8 character at the cut', async () => {
    routes.set('/pets/23', reply(200, 'text/plain; charset=utf-8', 'aé€'));
    const result = (await sendOperation(getPet, { petId: 23 }, settings({ maxResponseBytes: 4 }))).result;
    expect(text(result)).toBe('aé\n[truncated: showing first 4 of 6 bytes]');
  });

  it('does not parse truncated JSON; with an output schema it is an error', async () => {
    const body = JSON.stringify({ id: 1, name: 'n'.repeat(500) });
    routes.set('/pets/24', reply(200, 'application/json', body));
    const plain = (await sendOperation(getPet, { petId: 24 }, settings({ maxResponseBytes: 50 }))).result;
    expect(plain.isError).toBeUndefined();
    expect(text(plain)).toBe(`${body.slice(0, 50)}\n[truncated: showing first 50 of ${body.length} bytes]`);
    const typed = (await sendOperation(getPetTyped, { petId: 24 }, settings({ maxResponseBytes: 50 }))).result;
    expect(typed.isError).toBe(true);
    expect(typed.structuredContent).toBeUndefined();
    expect(text(typed)).toMatch(
      /\[truncated: showing first 50 of \d+ bytes\]\n\n\[note: the response exceeds the limit of 50 bytes, so it was not parsed; raise PETS_MAX_RESPONSE_BYTES/,
    );
  });

  it('refuses to return a truncated image', async () => {
    routes.set('/pets/25', reply(200, 'image/jpeg', Buffer.alloc(500, 1)));
    const result = (await sendOperation(getPet, { petId: 25 }, settings({ maxResponseBytes: 100 }))).result;
    expect(result.isError).toBe(true);
    expect(result.content).toHaveLength(1);
    expect(text(result)).toMatch(/image\/jpeg response is larger than the limit of 100 bytes \(\[truncated: showing first 100 of 500 bytes\]\)/);
  });

  it('bounds error bodies too', async () => {
    routes.set('/pets/26', reply(500, 'text/html', '<h1>' + 'e'.repeat(1000)));
    const result = (await sendOperation(getPet, { petId: 26 }, settings({ maxResponseBytes: 20 }))).result;
    expect(text(result)).toBe('HTTP 500 Internal Server Error\n<h1>' + 'e'.repeat(16) + '\n[truncated: showing first 20 of 1004 bytes]');
  });
});

describe('a 2xx is a success (lenient output schemas)', () => {
  it('accepts drift: extra properties, null in a non-null field, a missing field, a number sent as a string', async () => {
    routes.set('/pets/40', reply(200, 'application/json', '{"id":"40","name":null,"extra":{"x":1},"tags":["a",7]}'));
    const result = (await sendOperation(getPetLenient, { petId: 40 }, settings())).result;
    expect(result.isError).toBeUndefined();
    // compacted (the null is dropped); structuredContent fits the published schema (what the
    // schema does not accept is null there)
    expect(text(result)).toBe('{"id":"40","extra":{"x":1},"tags":["a",7]}');
    expect(result.structuredContent).toEqual({ id: null, extra: { x: 1 }, tags: ['a', null] });
    // without compaction the text is the body as sent
    const verbatim = (await sendOperation(getPetLenient, { petId: 40 }, settings({ results: { ...DEFAULT_RESULT_POLICY, compact: false } }))).result;
    expect(text(verbatim)).toBe('{"id":"40","name":null,"extra":{"x":1},"tags":["a",7]}');
    expect(verbatim.structuredContent).toEqual({ id: null, name: null, extra: { x: 1 }, tags: ['a', null] });
    routes.set('/pets/41', reply(200, 'application/json', '{}'));
    expect((await sendOperation(getPetLenient, { petId: 41 }, settings())).result).toEqual({ content: [{ type: 'text', text: '{}' }], structuredContent: {} });
  });

  it('an object tool that gets something else still succeeds, with empty structuredContent', async () => {
    routes.set('/pets/42', reply(200, 'application/json', '[1,2]'));
    routes.set('/pets/43', reply(200, 'application/json', '{oops'));
    routes.set('/pets/44', (_req, res) => {
      res.writeHead(204);
      res.end();
    });
    routes.set('/pets/45', reply(200, 'text/plain', 'fine'));
    for (const [id, body] of [
      [42, '[1,2]'],
      [43, '{oops'],
      [44, 'HTTP 204 No Content'],
      [45, 'fine'],
    ] as const) {
      expect((await sendOperation(getPetLenient, { petId: id }, settings())).result).toEqual({
        content: [{ type: 'text', text: body }],
        structuredContent: {},
      });
    }
  });

  it('wraps results that are not always objects as {status, data}', async () => {
    routes.set('/pets/50', reply(201, 'application/json', '[{"id":1,"name":"Rex"},{"id":"2"}]'));
    expect((await sendOperation(listPets, { petId: 50 }, settings())).result).toEqual({
      content: [{ type: 'text', text: '[{"id":1,"name":"Rex"},{"id":"2"}]' }],
      structuredContent: { status: 201, data: [{ id: 1, name: 'Rex' }, { id: null }] },
    });
    routes.set('/pets/51', (_req, res) => {
      res.writeHead(204);
      res.end();
    });
    expect((await sendOperation(listPets, { petId: 51 }, settings())).result).toEqual({
      content: [{ type: 'text', text: 'HTTP 204 No Content' }],
      structuredContent: { status: 204 },
    });
    routes.set('/pets/52', reply(200, 'text/csv', 'id\n1'));
    expect((await sendOperation(listPets, { petId: 52 }, settings())).result).toEqual({
      content: [{ type: 'text', text: 'id\n1' }],
      structuredContent: { status: 200 },
    });
    routes.set('/pets/53', reply(200, 'application/json', '"just a string"'));
    // a value of another type than the schema's: data is null, the text has it
    expect((await sendOperation(listPets, { petId: 53 }, settings())).result).toEqual({
      content: [{ type: 'text', text: '"just a string"' }],
      structuredContent: { status: 200, data: null },
    });
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    routes.set('/pets/54', reply(200, 'image/png', png));
    expect((await sendOperation(listPets, { petId: 54 }, settings())).result).toEqual({
      content: [{ type: 'image', data: png.toString('base64'), mimeType: 'image/png' }],
      structuredContent: { status: 200 },
    });
  });

  it('a truncated JSON body is a success with the text and no data', async () => {
    const body = JSON.stringify([{ id: 1, name: 'n'.repeat(500) }]);
    routes.set('/pets/55', reply(200, 'application/json', body));
    const result = (await sendOperation(listPets, { petId: 55 }, settings({ maxResponseBytes: 50 }))).result;
    expect(result.isError).toBeUndefined();
    expect(result.structuredContent).toEqual({ status: 200 });
    expect(text(result)).toMatch(/\[truncated: showing first 50 of \d+ bytes\]$/);
  });
});
