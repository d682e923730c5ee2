/**
 * Both protocol eras over both transports, end to end: the committed examples petstore-plus
 * (operation and extra tools, prompts, resources, concerns) and petstore-guarded (reflection
 * gate, preprocessors) are checked against their manifests, copied into `.cache/eras`, compiled,
 * and driven by the v1 SDK `Client` (legacy era) and the v2 `Client` pinned to 2026-07-28
 * (modern era), over stdio and over Streamable HTTP, against the example's backend on 127.0.0.1.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod/v4';
import { startBackend } from '../../examples/petstore/backend.mjs';
import { inspectHttp } from '../../scripts/inspector.mjs';
import { main } from '../../src/cli/main.js';
import type { AnyClient, Era, HttpProcess, Target, TransportKind } from '../helpers/eras.js';
import { connectClient, ERAS, rpcError, startHttp, TRANSPORTS } from '../helpers/eras.js';
import { ROOT, run } from '../helpers/project.js';

const work = path.join(ROOT, '.cache/eras');
const GOOD = {
  intent: 'remove a duplicate record',
  alternatives: ['mark it sold', 'leave it'],
  choice: 'delete: the record was entered twice',
  confidence: 0.9,
};
const META_KEY = 'io.mcpgen/concerns';
const SIGNED_HASH = /^[0-9a-f]{64}\.\d+\.[A-Za-z0-9_-]+$/;

type Backend = {
  url: string;
  server: { close(): void };
  requests: Array<{ method: string; path: string; body: string; headers: Record<string, string | undefined> }>;
};
let backend: Backend;
const projects: Record<'plus' | 'guarded', string> = { plus: path.join(work, 'plus/server'), guarded: path.join(work, 'guarded/server') };
const http: Partial<Record<'plus' | 'guarded', HttpProcess>> = {};
const open: AnyClient[] = [];
const KEY = 'an-e2e-state-key-that-is-long-enough-0123456789';

function env(which: 'plus' | 'guarded'): Record<string, string> {
  if (which === 'plus') return { PETSTORE_PLUS_BASE_URL: backend.url };
  return {
    PETSTORE_GUARDED_BASE_URL: backend.url,
    PETSTORE_GUARDED_REFLECTION_DIR: mkdtempSync(path.join(work, 'store-')),
    PETSTORE_GUARDED_STATE_KEY: KEY,
    PETSTORE_GUARDED_LOG_LEVEL: 'debug',
  };
}

beforeAll(async () => {
  rmSync(work, { recursive: true, force: true });
  const io = { stdout: () => undefined, stderr: (s: string) => void process.stderr.write(s), cwd: ROOT };
  for (const [which, example] of [
    ['plus', 'petstore-plus'],
    ['guarded', 'petstore-guarded'],
  ] as const) {
    cpSync(path.join(ROOT, 'examples', example, 'server'), projects[which], {
      recursive: true,
      filter: (src) => !/[\\/](node_modules|dist|\.preflight)$/.test(src),
    });
    expect(await main(['build', `examples/${example}/mcpgen.yaml`, '--out', path.relative(ROOT, projects[which]), '--check'], io)).toBe(0);
    await run(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', projects[which]]);
  }
  backend = (await startBackend({ port: 0 })) as Backend;
  http.plus = await startHttp(projects.plus, env('plus'));
  http.guarded = await startHttp(projects.guarded, env('guarded'));
}, 240_000);

afterAll(async () => {
  await Promise.all(open.splice(0).map((c) => c.close().catch(() => undefined)));
  for (const p of Object.values(http)) p?.kill('SIGKILL');
  backend?.server.close();
});

/** A connected client of `era` over `transport` to the example `which`. */
async function client(which: 'plus' | 'guarded', transport: TransportKind, era: Era, options: Parameters<typeof connectClient>[2] = {}): Promise<AnyClient> {
  const target: Target = transport === 'stdio' ? { kind: 'stdio', server: projects[which], env: env(which) } : { kind: 'http', url: http[which]!.url };
  const { client: c } = await connectClient(target, era, options);
  open.push(c);
  return c;
}

type Result = { isError?: boolean; content: Array<{ type: string; text?: string }>; structuredContent?: unknown };
const text = (r: Result) => r.content.map((c) => c.text ?? '').join('\n');
const RunResult = z.looseObject({ ok: z.boolean(), blocks: z.array(z.looseObject({ name: z.string(), status: z.string(), content: z.string().optional() })) });
const UpdateResult = z.looseObject({ concerns: z.record(z.string(), z.unknown()), changed: z.unknown() });
/** The hint of a gate: in structuredContent, or (a tool with a strict output schema) as JSON in the second text block. */
const hintOf = (r: Result) => (r.structuredContent ?? JSON.parse(r.content[1]!.text!)) as { hash: string; domain: string; prompt: string };
/** A new pet in the backend (each test deletes or changes its own). */
async function newPet(name: string): Promise<number> {
  const res = await fetch(`${backend.url}/pets`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name, status: 'available' }),
  });
  return ((await res.json()) as { id: number }).id;
}
const ToolList = z.object({ tools: z.array(z.object({ name: z.string() }).passthrough()) }).passthrough();

describe.each(TRANSPORTS.flatMap((t) => ERAS.map((e) => [t, e] as const)))('over %s, %s era', (transport, era) => {
  it('lists tools, runs a GET and a POST tool against the backend, reports bad arguments and unknown tools', async () => {
    const c = await client('plus', transport, era);
    const names = (await c.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['listPets', 'getPetById', 'createPet', 'adoption_fee', 'pet_name_ideas']));
    const before = backend.requests.length;
    const got = (await c.callTool({ name: 'getPetById', arguments: { petId: 1 } })) as Result;
    expect(got.isError, text(got)).toBeFalsy();
    expect(got.structuredContent).toMatchObject({ id: 1, name: 'Rex' });
    const created = (await c.callTool({ name: 'createPet', arguments: { body: { name: `Pip-${transport}-${era}`, status: 'available' } } })) as Result;
    expect(created.isError, text(created)).toBeFalsy();
    expect(backend.requests.slice(before).map((r) => `${r.method} ${r.path}`)).toEqual(['GET /pets/1', 'POST /pets']);
    expect(backend.requests.at(-1)!.body).toContain(`Pip-${transport}-${era}`);
    const bad = (await c.callTool({ name: 'getPetById', arguments: { petId: 'one' } })) as Result;
    expect(bad.isError).toBe(true);
    expect(text(bad)).toMatch(/^Invalid arguments for tool getPetById:\n- petId: must be integer/);
    const unknown = await rpcError(c.callTool({ name: 'no_such_tool', arguments: {} }));
    expect(unknown.code).toBe(-32602);
    // the whole message: the 1.x client prefixes the wire message with `MCP error <code>: ` once (a message that already held it would read twice)
    expect(unknown.message).toBe(`${era === 'legacy' ? 'MCP error -32602: ' : ''}Unknown tool: no_such_tool`);
    const fee = (await c.callTool({ name: 'adoption_fee', arguments: { species: 'cat', ageYears: 2 } })) as Result;
    expect(fee.isError, text(fee)).toBeFalsy();
    expect(fee.structuredContent).toMatchObject({ currency: expect.any(String) });
  });

  it('serves a prompt and a resource', async () => {
    const c = await client('plus', transport, era);
    const prompt = await c.getPrompt({ name: 'adopt_a_pet', arguments: { species: 'rabbit' } });
    expect(JSON.stringify(prompt.messages)).toContain('I would like to adopt a rabbit.');
    const policy = await c.readResource({ uri: 'petstore://policies/adoption' });
    expect(JSON.stringify(policy.contents)).toContain('Adopters must be 18 or older');
    const care = await c.readResource({ uri: 'petstore://species/cat/care' });
    expect(care.contents.length).toBeGreaterThan(0);
  });

  it("filters by concern: legacy through concerns/update and list_changed, modern through each request's _meta", async () => {
    if (era === 'legacy') {
      let changed = 0;
      const c = await client('plus', transport, era, {
        setup: (cl) =>
          (cl as { setNotificationHandler: (s: unknown, h: () => void) => void }).setNotificationHandler(
            z.object({ method: z.literal('notifications/tools/list_changed') }).passthrough(),
            () => void changed++,
          ),
      });
      const all = (await c.listTools()).tools.map((t) => t.name);
      await c.request({ method: 'concerns/update', params: { concerns: { audience: 'customer', risk: 'low' } } }, UpdateResult as never);
      const deadline = Date.now() + 5000;
      while (changed === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(changed).toBeGreaterThan(0);
      const shown = (await c.listTools()).tools.map((t) => t.name);
      expect(shown.length).toBeLessThan(all.length);
      expect(shown).toEqual(expect.arrayContaining(['adoption_fee', 'pet_name_ideas']));
      expect(shown).not.toContain('createPet');
      // enforced: a hidden tool cannot be called
      expect((await rpcError(c.callTool({ name: 'createPet', arguments: { body: { name: 'x' } } }))).code).toBe(-32602);
    } else {
      const c = await client('plus', transport, era);
      const all = ((await c.request({ method: 'tools/list', params: {} }, ToolList as never)) as z.infer<typeof ToolList>).tools.map((t) => t.name);
      const shown = (
        (await c.request({ method: 'tools/list', params: { _meta: { [META_KEY]: { audience: 'customer', risk: 'low' } } } }, ToolList as never)) as z.infer<
          typeof ToolList
        >
      ).tools.map((t) => t.name);
      expect(shown.length).toBeLessThan(all.length);
      expect(shown).not.toContain('createPet');
      // the next request without _meta sees everything again: no connection state
      expect(((await c.request({ method: 'tools/list', params: {} }, ToolList as never)) as z.infer<typeof ToolList>).tools.map((t) => t.name)).toEqual(all);
      // concerns/update has no meaning without a session: refused with a pointer to _meta
      const refused = await rpcError(c.request({ method: 'concerns/update', params: { concerns: { audience: 'customer' } } }, UpdateResult as never));
      expect(refused.message).toMatch(/_meta/);
    }
  });

  it('reflection gate by sampling: a doubly gated tool runs in one tools/call', async () => {
    const sampled: unknown[] = [];
    const c = await client('guarded', transport, era, {
      capabilities: { sampling: {} },
      setup: (cl) => {
        const handler = (req: unknown) => {
          sampled.push(req);
          return { role: 'assistant', model: 'scripted', content: { type: 'text', text: JSON.stringify(GOOD) } };
        };
        if (era === 'legacy')
          (cl as { setRequestHandler: (s: unknown, h: unknown) => void }).setRequestHandler(
            z.object({ method: z.literal('sampling/createMessage') }).passthrough(),
            handler,
          );
        else (cl as { setRequestHandler: (m: string, h: unknown) => void }).setRequestHandler('sampling/createMessage', handler);
      },
    });
    const petId = await newPet(`Doomed-${transport}-${era}`);
    const before = backend.requests.length;
    const result = (await c.callTool({ name: 'deletePet', arguments: { petId } })) as Result;
    expect(result.isError, text(result)).toBeFalsy();
    expect(sampled).toHaveLength(2);
    expect(backend.requests.slice(before).map((r) => `${r.method} ${r.path}`)).toEqual([`DELETE /pets/${petId}`]);
  });

  it('reflection gate by the host flow: hint, persist_justification, retry', async () => {
    const c = await client('guarded', transport, era);
    const petId = await newPet(`Changed-${transport}-${era}`);
    const args = { petId, body: { name: `Changed-${transport}-${era}`, status: 'pending' } };
    const first = (await c.callTool({ name: 'updatePet', arguments: args })) as Result;
    expect(first.isError).toBe(true);
    const hint = hintOf(first);
    expect(hint.hash).toMatch(SIGNED_HASH);
    const stored = (await c.callTool({ name: 'persist_justification', arguments: { hash: hint.hash, domain: hint.domain, justification: GOOD } })) as Result;
    expect(stored.isError, text(stored)).toBeFalsy();
    const before = backend.requests.length;
    const retried = (await c.callTool({ name: 'updatePet', arguments: args })) as Result;
    expect(retried.isError, text(retried)).toBeFalsy();
    expect(backend.requests.slice(before).map((r) => r.method)).toEqual(['PUT']);
  });

  it('runs preprocessors and serves with_context', async () => {
    const c = await client('guarded', transport, era);
    const ran = (await c.request(
      { method: 'preprocessors/run', params: { input: 'Please delete Rex, he was entered twice.' } },
      RunResult as never,
    )) as z.infer<typeof RunResult>;
    expect(ran.ok).toBe(true);
    expect(ran.blocks.map((b) => b.name)).toEqual(['house_rules', 'pet_lookup']);
    expect(ran.blocks.map((b) => b.content ?? '').join('\n')).toContain('Rex');
    const prompt = await c.getPrompt({ name: 'with_context', arguments: { input: 'adopt Rex' } });
    expect(JSON.stringify(prompt.messages)).toContain('adopt Rex');
  });
});

/** Sends one raw HTTP request (Host and Origin headers included as given) and returns status, headers and body. */
function raw(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string },
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path: u.pathname, method: init.method ?? 'POST', headers: init.headers ?? {} }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => void (body += d.toString('utf8')));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end(init.body);
  });
}

const INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

describe('Streamable HTTP', () => {
  it('gives two legacy sessions with different concern preferences different lists at the same time', async () => {
    const a = await client('plus', 'http', 'legacy');
    const b = await client('plus', 'http', 'legacy');
    await a.request({ method: 'concerns/update', params: { concerns: { audience: 'customer' } } }, UpdateResult as never);
    await b.request({ method: 'concerns/update', params: { concerns: { audience: 'staff' } } }, UpdateResult as never);
    const [la, lb] = await Promise.all([a.listTools(), b.listTools()]);
    const na = la.tools.map((t) => t.name);
    const nb = lb.tools.map((t) => t.name);
    expect(na).toContain('adoption_fee');
    expect(na).not.toContain('createPet');
    expect(nb).toContain('createPet');
    expect(nb).not.toContain('adoption_fee');
  });

  it('refuses a foreign Host or Origin with 403, answers /healthz, and has no CORS', async () => {
    const url = http.plus!.url;
    const port = new URL(url).port;
    expect((await raw(url, { headers: { ...MCP_HEADERS, host: `evil.example:${port}` }, body: INIT })).status).toBe(403);
    expect((await raw(url, { headers: { ...MCP_HEADERS, origin: 'https://evil.example' }, body: INIT })).status).toBe(403);
    const ok = await raw(url, { headers: { ...MCP_HEADERS, origin: `http://localhost:${port}` }, body: INIT });
    expect(ok.status).toBe(200);
    expect(ok.headers['access-control-allow-origin']).toBeUndefined();
    const health = await raw(url.replace(/\/mcp$/, '/healthz'), { method: 'GET' });
    expect(health.status).toBe(200);
    expect(JSON.parse(health.body)).toMatchObject({ name: 'petstore-plus', version: '1.0.0' });
  });

  it('with tokens: 401 and WWW-Authenticate without or with a wrong token; the right token serves both eras', async () => {
    const tokens = { alice: 'alice-token-0123456789abcdef', bob: 'bob-token-0123456789abcdef' };
    const p = await startHttp(projects.plus, { ...env('plus'), PETSTORE_PLUS_HTTP_TOKENS: `alice=${tokens.alice},bob=${tokens.bob}` });
    try {
      const none = await raw(p.url, { headers: MCP_HEADERS, body: INIT });
      expect(none.status).toBe(401);
      expect(String(none.headers['www-authenticate'])).toMatch(/^Bearer/);
      const wrong = await raw(p.url, { headers: { ...MCP_HEADERS, authorization: 'Bearer nope' }, body: INIT });
      expect(wrong.status).toBe(401);
      expect(String(wrong.headers['www-authenticate'])).toContain('invalid_token');
      for (const era of ERAS) {
        const { client: c } = await connectClient({ kind: 'http', url: p.url, headers: { authorization: `Bearer ${tokens.bob}` } }, era);
        open.push(c);
        expect((await c.listTools()).tools.length).toBeGreaterThan(0);
      }
      // the MCP client's token never reaches the API
      const before = backend.requests.length;
      const { client: c } = await connectClient({ kind: 'http', url: p.url, headers: { authorization: `Bearer ${tokens.alice}` } }, 'legacy');
      open.push(c);
      await c.callTool({ name: 'getPetById', arguments: { petId: 2 } });
      const sent = backend.requests.slice(before);
      expect(sent).toHaveLength(1);
      expect(JSON.stringify(sent[0]!.headers)).not.toContain(tokens.alice);
    } finally {
      p.kill('SIGKILL');
    }
  });

  it('accepts a hint issued by one process on a second process with the same key, and refuses it under another key', async () => {
    const a = await client('guarded', 'http', 'legacy');
    const petId = await newPet('Shared');
    const args = { petId, body: { name: 'Shared', status: 'sold' } };
    const first = (await a.callTool({ name: 'updatePet', arguments: args })) as Result;
    const hint = hintOf(first);
    const other = await startHttp(projects.guarded, { ...env('guarded'), PETSTORE_GUARDED_STATE_KEY: 'a-different-key-for-another-deployment-0123456789' });
    const same = await startHttp(projects.guarded, env('guarded'));
    try {
      const { client: onOther } = await connectClient({ kind: 'http', url: other.url }, 'modern');
      open.push(onOther);
      const refused = (await onOther.callTool({
        name: 'persist_justification',
        arguments: { hash: hint.hash, domain: hint.domain, justification: GOOD },
      })) as Result;
      expect(refused.isError).toBe(true);
      expect(text(refused)).toMatch(/key|sign/i);
      const { client: onSame } = await connectClient({ kind: 'http', url: same.url }, 'modern');
      open.push(onSame);
      const accepted = (await onSame.callTool({
        name: 'persist_justification',
        arguments: { hash: hint.hash, domain: hint.domain, justification: GOOD },
      })) as Result;
      expect(accepted.isError, text(accepted)).toBeFalsy();
      const before = backend.requests.length;
      const retried = (await onSame.callTool({ name: 'updatePet', arguments: args })) as Result;
      expect(retried.isError, text(retried)).toBeFalsy();
      expect(backend.requests.slice(before).map((r) => r.method)).toEqual(['PUT']);
    } finally {
      other.kill('SIGKILL');
      same.kill('SIGKILL');
    }
  });

  it('drains on SIGTERM: a call in flight completes, then the process exits 0', async () => {
    const slow = createServer(
      (_req, res) => void setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{"id":9,"name":"Slow"}'), 800),
    );
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    const p = await startHttp(projects.plus, { PETSTORE_PLUS_BASE_URL: `http://127.0.0.1:${(slow.address() as AddressInfo).port}` });
    try {
      const { client: c } = await connectClient({ kind: 'http', url: p.url }, 'modern');
      const pending = c.callTool({ name: 'getPetById', arguments: { petId: 9 } });
      await new Promise((r) => setTimeout(r, 200));
      p.kill('SIGTERM');
      const result = (await pending) as Result;
      expect(result.isError, text(result)).toBeFalsy();
      expect(result.structuredContent).toMatchObject({ id: 9 });
      expect(await p.exit).toBe(0);
    } finally {
      p.kill('SIGKILL');
      slow.closeAllConnections();
      slow.close();
    }
  });

  it('is listed and called by the official MCP Inspector CLI over HTTP', async () => {
    const url = http.plus!.url;
    const listed = await inspectHttp(url, ['--method', 'tools/list']);
    expect(listed.code, listed.stderr).toBe(0);
    const names = (listed.output as { result: { tools: Array<{ name: string }> } }).result.tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['getPetById', 'adoption_fee']));
    const called = await inspectHttp(url, ['--method', 'tools/call', '--tool-name', 'getPetById', '--tool-arg', 'petId=1']);
    expect(called.code, called.stdout + called.stderr).toBe(0);
    const result = (called.output as { result: { isError?: boolean; structuredContent?: unknown } }).result;
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ id: 1, name: 'Rex' });
  }, 300_000);
});

describe('command line', () => {
  it('prints the version on stdout and help naming the transports', async () => {
    const version = await run(process.execPath, [path.join(projects.plus, 'dist/server.js'), '--version']);
    expect(version.stdout.trim()).toBe('1.0.0');
    const help = await run(process.execPath, [path.join(projects.plus, 'dist/server.js'), '--help']);
    expect(help.stdout).toContain('--transport');
    expect(help.stdout).toContain('PETSTORE_PLUS_HTTP_TOKENS');
  });
});
