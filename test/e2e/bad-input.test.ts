/**
 * What a generated server does with input meant to break it (issue 10, items 1–4 and 7), through
 * the SDK `Client` over stdio against a backend on 127.0.0.1 that echoes each request:
 *
 * - a catastrophic-backtracking `pattern` is matched in linear time: a 50-character "aaa…a!"
 *   is answered at once and a concurrent `ping` within 1 s;
 * - patterns the linear-time engine cannot run (lookaround, backreferences) are dropped from
 *   the published and the enforced schema, with a build warning naming the tool and the pattern;
 * - `multipleOf: 0.1` accepts 0.3;
 * - parameters and properties named `__proto__`, `constructor`, `toString` are published,
 *   required, validated and sent like any other;
 * - a schema nested 500 levels deep builds into a bounded schema the server validates;
 * - `arguments` of the wrong JSON type is a JSON-RPC -32602 error with one readable line.
 */
import http from 'node:http';
import { type CallToolResult, CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod/v4';
import { type BuiltServer, buildServer, type Connected, connect, pingMs } from '../helpers/generated-server.js';
import { rejection } from '../helpers/mcp.js';

/** A schema nested `depth` levels: objects in properties, arrays in items, alternating. */
function nested(depth: number): unknown {
  let s: unknown = { type: 'string' };
  for (let i = 0; i < depth; i++) s = i % 2 === 0 ? { type: 'object', properties: { n: s } } : { type: 'array', items: s };
  return s;
}

const SPEC = JSON.stringify({
  openapi: '3.1.0',
  info: { title: 'bad input', version: '1' },
  paths: {
    '/match': {
      get: {
        operationId: 'match',
        parameters: [{ name: 'word', in: 'query', required: true, schema: { type: 'string', pattern: '^(a+)+$' } }],
        responses: { '200': { description: 'ok' } },
      },
    },
    '/look': {
      get: {
        operationId: 'lookaround',
        parameters: [
          { name: 'code', in: 'query', required: true, schema: { type: 'string', pattern: '^(?!x)\\w+$' } },
          { name: 'twice', in: 'query', schema: { type: 'string', pattern: '^(a)\\1$' } },
          { name: 'plain', in: 'query', schema: { type: 'string', pattern: '^[a-z]+$' } },
        ],
        responses: { '200': { description: 'ok' } },
      },
    },
    '/measure': {
      post: {
        operationId: 'measure',
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: {
                type: 'object',
                properties: {
                  step: { type: 'number', multipleOf: 0.1 },
                  cents: { type: 'number', multipleOf: 0.01 },
                  labels: { type: 'object', patternProperties: { '^(?<=a)b$': { type: 'integer' }, '^x-': { type: 'string' } } },
                },
              },
            },
          },
        },
        responses: { '200': { description: 'ok' } },
      },
    },
    '/proto': {
      post: {
        operationId: 'proto',
        parameters: [
          { name: '__proto__', in: 'query', required: true, schema: { type: 'string' } },
          { name: 'constructor', in: 'query', schema: { type: 'string' } },
          { name: 'toString', in: 'header', schema: { type: 'string' } },
        ],
        requestBody: {
          content: {
            'application/json': {
              schema: {
                type: 'object',
                required: ['__proto__', 'constructor'],
                properties: {
                  ['__proto__']: { type: 'string' },
                  constructor: { type: 'integer' },
                  toString: { type: 'boolean' },
                  hasOwnProperty: { type: 'string' },
                },
              },
            },
          },
        },
        responses: { '200': { description: 'ok' } },
      },
    },
    '/deep': {
      post: {
        operationId: 'deep',
        requestBody: { content: { 'application/json': { schema: nested(500) } } },
        responses: { '200': { description: 'ok' } },
      },
    },
    '/deep-ref': {
      post: {
        operationId: 'deepRef',
        requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/L0' } } } },
        responses: { '200': { description: 'ok' } },
      },
    },
  },
  components: {
    // a chain of 600 distinct definitions, each inlined into the one before
    schemas: Object.fromEntries(
      Array.from({ length: 600 }, (_, i) => [
        `L${i}`,
        i === 599 ? { type: 'string' } : { type: 'object', properties: { next: { $ref: `#/components/schemas/L${i + 1}` } } },
      ]),
    ),
  },
});

const MANIFEST = `name: badinput
openapi: ./openapi.yaml
output: ./server
baseUrl: https://api.example.com
inputSchemaMaxBytes: 1000000
`;

type Seen = { method: string; url: string; headers: http.IncomingHttpHeaders; body: string };
let seen: Seen[] = [];
let backend: http.Server;
let built: BuiltServer;
let server: Connected;

beforeAll(async () => {
  built = await buildServer('bad-input', SPEC, MANIFEST);
  backend = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    });
  });
  await new Promise<void>((r) => backend.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(backend.address() as { port: number }).port}`;
  server = await connect(built.server, { BADINPUT_BASE_URL: url });
}, 300_000);

afterAll(async () => {
  await server?.close();
  backend?.close();
});

const call = async (name: string, args: unknown): Promise<CallToolResult> => {
  seen = [];
  return (await server.client.callTool({ name, arguments: args as Record<string, unknown> })) as CallToolResult;
};
const text = (r: CallToolResult) => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');

describe('patterns are matched in linear time', () => {
  it('a catastrophic-backtracking pattern answers at once, and ping stays responsive', async () => {
    const started = performance.now();
    const pending = call('match', { word: 'a'.repeat(50) + '!' });
    const ping = pingMs(server.client, 5_000);
    const [result, pinged] = await Promise.all([pending, ping]);
    expect(pinged).toBeLessThan(1_000);
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/word: must match pattern/);
    expect(seen).toEqual([]);
    const ok = await call('match', { word: 'aaaa' });
    expect(ok.isError).toBeUndefined();
    expect(seen[0]!.url).toBe('/match?word=aaaa');
  }, 20_000);

  it('drops the patterns the engine cannot run, with a build warning naming tool and pattern', async () => {
    expect(built.stderr).toMatch(/MCPGEN_PATTERN_DROPPED/);
    expect(built.stderr).toContain('lookaround');
    expect(built.stderr).toContain('^(?!x)\\w+$');
    expect(built.stderr).toContain('^(a)\\1$');
    expect(built.stderr).toContain('^(?<=a)b$');
    const { tools } = await server.client.listTools();
    const look = tools.find((t) => t.name === 'lookaround')!;
    const props = look.inputSchema.properties as Record<string, Record<string, unknown>>;
    expect(props.code!.pattern).toBeUndefined();
    expect(props.twice!.pattern).toBeUndefined();
    expect(props.plain!.pattern).toBe('^[a-z]+$');
    const measure = tools.find((t) => t.name === 'measure')!;
    expect(JSON.stringify(measure.inputSchema)).not.toContain('(?<=');
    expect(JSON.stringify(measure.inputSchema)).toContain('^x-');
    // not enforced either: the API checks what the server cannot
    expect((await call('lookaround', { code: 'xyz', twice: 'ab' })).isError).toBeUndefined();
    expect((await call('lookaround', { code: 'abc', plain: 'ABC' })).isError).toBe(true);
  });
});

describe('numbers', () => {
  it('multipleOf 0.1 accepts 0.3 and multipleOf 0.01 accepts 0.07; 0.35 is still refused', async () => {
    for (const step of [0.3, 0.7, 1.1, 2.3]) expect((await call('measure', { body: { step } })).isError, String(step)).toBeUndefined();
    expect((await call('measure', { body: { cents: 0.07 } })).isError).toBeUndefined();
    const bad = await call('measure', { body: { step: 0.35 } });
    expect(bad.isError).toBe(true);
    expect(text(bad)).toMatch(/body\.step: must be multiple of 0\.1/);
  });
});

describe('argument and property names that are Object.prototype members', () => {
  it('publishes them as properties, and required ones as required', async () => {
    // as sent: the SDK's own result schema would drop a `__proto__` key
    const { tools } = await server.client.request({ method: 'tools/list' }, z.object({ tools: z.array(z.unknown()) }));
    const proto = (tools as Array<{ name: string; inputSchema: { properties: Record<string, unknown>; required: string[] } }>).find((t) => t.name === 'proto')!;
    const props = proto.inputSchema.properties!;
    expect(Object.keys(props)).toEqual(['__proto__', 'constructor', 'toString', 'body']);
    expect(proto.inputSchema.required).toEqual(['__proto__']);
    const body = props.body as { properties: Record<string, unknown>; required: string[] };
    expect(Object.keys(body.properties)).toEqual(['__proto__', 'constructor', 'toString', 'hasOwnProperty']);
    expect(body.required).toEqual(['__proto__', 'constructor']);
  });

  it('validates and sends them', async () => {
    const args = JSON.parse(
      '{"__proto__":"p","constructor":"c","toString":"t","body":{"__proto__":"bp","constructor":7,"toString":true,"hasOwnProperty":"h"}}',
    ) as Record<string, unknown>;
    const result = await call('proto', args);
    expect(text(result)).toBe('{"ok":true}');
    expect(result.isError).toBeUndefined();
    expect(seen[0]!.url).toBe('/proto?__proto__=p&constructor=c');
    expect(seen[0]!.headers.tostring).toBe('t');
    expect(JSON.parse(seen[0]!.body)).toEqual(JSON.parse('{"__proto__":"bp","constructor":7,"toString":true,"hasOwnProperty":"h"}'));
  });

  it('leaves unset ones out (the inherited members are never sent) and reports missing required ones', async () => {
    const ok = await call('proto', JSON.parse('{"__proto__":"p","body":{"__proto__":"x","constructor":1}}'));
    expect(ok.isError).toBeUndefined();
    expect(seen[0]!.url).toBe('/proto?__proto__=p');
    expect(seen[0]!.headers.tostring).toBeUndefined();
    const missing = await call('proto', { body: { toString: 'no' } });
    expect(missing.isError).toBe(true);
    expect(text(missing)).toContain('__proto__: is required');
    expect(text(missing)).toContain('body.__proto__: is required');
    expect(text(missing)).toContain('body.constructor: is required');
    expect(text(missing)).toContain('body.toString: must be boolean');
    expect(seen).toEqual([]);
  });
});

describe('deeply nested schemas', () => {
  it('are cut at build time with a warning, and the tools can be called', async () => {
    expect(built.stderr).toMatch(/MCPGEN_SCHEMA_TOO_DEEP/);
    const { tools } = await server.client.listTools();
    for (const name of ['deep', 'deepRef']) {
      const t = tools.find((x) => x.name === name)!;
      let depth = 0;
      const walk = (v: unknown, d: number): void => {
        depth = Math.max(depth, d);
        if (typeof v === 'object' && v !== null) for (const x of Object.values(v)) walk(x, d + 1);
      };
      walk(t.inputSchema, 0);
      expect(depth, name).toBeLessThan(300);
    }
    // the root is an array of objects whose `n` is an array of objects, and so on
    const value: unknown = [{ n: [{ n: [{ n: [] }] }] }];
    const deep = await call('deep', { body: value });
    expect(text(deep)).toBe('{"ok":true}');
    expect(JSON.parse(seen[0]!.body)).toEqual(value);
    const deepRef = await call('deepRef', { body: { next: { next: { next: {} } } } });
    expect(text(deepRef)).toBe('{"ok":true}');
    const wrong = await call('deep', { body: [{ n: 'not an array' }] });
    expect(wrong.isError).toBe(true);
    expect(text(wrong)).toContain('body[0].n: must be array');
  });
});

describe('malformed tools/call requests', () => {
  it.each([
    ['a string', 'x', /^MCP error -32602: Invalid arguments for tool match: arguments must be an object of argument values, not a string$/],
    ['an array', ['a'], /^MCP error -32602: Invalid arguments for tool match: arguments must be an object of argument values, not an array$/],
    ['a number', 7, /^MCP error -32602: Invalid arguments for tool match: arguments must be an object of argument values, not a number$/],
  ])('arguments given as %s: -32602 with one readable line', async (_label, args, message) => {
    const err = await rejection(server.client.callTool({ name: 'match', arguments: args as unknown as Record<string, unknown> }));
    expect(err.code).toBe(-32602);
    expect(err.message).toMatch(message);
    expect(err.message).not.toContain('\n');
  });

  it('a tool name that is not a string: -32602 with one readable line', async () => {
    const err = await rejection(server.client.request({ method: 'tools/call', params: { name: 42 as unknown as string } }, CallToolResultSchema));
    expect(err.code).toBe(-32602);
    expect(err.message).toBe('MCP error -32602: Invalid tools/call request: name must be a string, not a number');
  });
});
