/**
 * Resource subscriptions and `x-mcp-header` end to end (issue 21): the manifest of
 * test/fixtures/subscriptions is built into `.cache/subscriptions`, compiled, and driven by the v1
 * SDK `Client` (legacy era: resources/subscribe, resources/unsubscribe) and the v2 `Client` pinned
 * to 2026-07-28 (modern era: subscriptions/listen), over stdio and over Streamable HTTP.
 * - a resource whose handler module signals a change (`notifyResourceUpdated`) and one polled
 *   every 100 ms (`refreshMs`) both reach a subscriber as notifications/resources/updated;
 *   unsubscribing (closing the listen stream) stops them;
 * - a resource the policy denies cannot be subscribed to (the error resources/read gives), and its
 *   changes never reach a client that asked for it;
 * - header parameters (and an argument the manifest names) carry `x-mcp-header`; over HTTP a
 *   2026-07-28 call whose Mcp-Param-* header disagrees with the body is refused with HTTP 400 and
 *   -32020, one that agrees (literal or Base64) runs, and the v2 client mirrors the header itself.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Client as ModernClient } from '@modelcontextprotocol/client';
import type { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import type { AnyClient, Era, HttpProcess, TransportKind } from '../helpers/eras.js';
import { connectClient, ERAS, rpcError, startHttp, TRANSPORTS } from '../helpers/eras.js';
import { ROOT, run } from '../helpers/project.js';

const FIXTURE = path.join(ROOT, 'test/fixtures/subscriptions');
const work = path.join(ROOT, '.cache/subscriptions');
const project = path.join(work, 'server');
let http: HttpProcess;
const open: AnyClient[] = [];

const HANDLERS = `import { notifyResourceUpdated } from '../runtime/handlers.js';

let signalledCount = 0;
let polledCount = 0;
let secretCount = 0;

export function bump() {
  signalledCount++;
  notifyResourceUpdated('notes://signalled');
  return \`signalled \${signalledCount}\`;
}
export function bumpSecret() {
  secretCount++;
  notifyResourceUpdated('notes://secret');
  return \`secret \${secretCount}\`;
}
export function touchPolled() {
  polledCount++;
  return \`polled \${polledCount}\`;
}
export function echoRegion(args: { region: string }) {
  return \`region: \${args.region}\`;
}
export const signalled = () => \`signalled note \${signalledCount}\`;
export const polled = () => \`polled note \${polledCount}\`;
export const secret = () => \`secret note \${secretCount}\`;
`;

beforeAll(async () => {
  rmSync(work, { recursive: true, force: true });
  mkdirSync(path.join(project, 'src/handlers'), { recursive: true });
  writeFileSync(path.join(project, 'src/handlers/notes.ts'), HANDLERS);
  // bump_secret: a tool that signals a change of the resource the policy denies
  const manifest = path.join(work, 'mcpgen.yaml');
  const { readFileSync } = await import('node:fs');
  writeFileSync(path.join(work, 'openapi.yaml'), readFileSync(path.join(FIXTURE, 'openapi.yaml')));
  writeFileSync(
    manifest,
    readFileSync(path.join(FIXTURE, 'mcpgen.yaml'), 'utf8').replace(
      'extraTools:\n',
      'extraTools:\n  - name: bump_secret\n    description: Changes the secret note and says so.\n    inputSchema: { type: object, properties: {}, additionalProperties: false }\n    handler: handlers/notes.ts#bumpSecret\n',
    ),
  );
  const io = { stdout: () => undefined, stderr: (s: string) => void process.stderr.write(s), cwd: ROOT };
  expect(await main(['build', path.relative(ROOT, manifest), '--out', path.relative(ROOT, project), '--quiet'], io)).toBe(0);
  await run(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', project]);
  http = await startHttp(project, {});
}, 240_000);

afterAll(async () => {
  await Promise.all(open.splice(0).map((c) => c.close().catch(() => undefined)));
  http?.kill('SIGKILL');
});

/** A client whose notifications/resources/updated URIs are collected, in arrival order. */
async function client(transport: TransportKind, era: Era): Promise<{ c: AnyClient; updates: string[]; next: (uri: string) => Promise<void> }> {
  const updates: string[] = [];
  const waiters: Array<{ uri: string; resolve: () => void }> = [];
  const onUpdate = (uri: string) => {
    updates.push(uri);
    for (const w of waiters.splice(0)) {
      if (w.uri === uri) w.resolve();
      else waiters.push(w);
    }
  };
  const setup = (c: AnyClient) => {
    if (era === 'legacy') (c as LegacyClient).setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => onUpdate(n.params.uri));
    else (c as ModernClient).setNotificationHandler('notifications/resources/updated', (n) => onUpdate(n.params.uri));
  };
  const { client: c } = await connectClient(transport === 'stdio' ? { kind: 'stdio', server: project, env: {} } : { kind: 'http', url: http.url }, era, {
    setup,
  });
  open.push(c);
  // resolves when the next notification for `uri` arrives (the test times out otherwise)
  const next = (uri: string) => new Promise<void>((resolve) => waiters.push({ uri, resolve }));
  return { c, updates, next };
}

/** Subscribes to `uris` as the era does; resolves to the unsubscribe. */
async function subscribe(c: AnyClient, era: Era, uris: string[]): Promise<() => Promise<void>> {
  if (era === 'legacy') {
    const legacy = c as LegacyClient;
    for (const uri of uris) await legacy.subscribeResource({ uri });
    return async () => {
      for (const uri of uris) await legacy.unsubscribeResource({ uri });
    };
  }
  const sub = await (c as ModernClient).listen({ resourceSubscriptions: uris });
  expect(sub.honoredFilter.resourceSubscriptions).toEqual(uris);
  return () => sub.close();
}

const call = (c: AnyClient, name: string, args: Record<string, unknown> = {}) => (c as LegacyClient).callTool({ name, arguments: args });

describe.each(TRANSPORTS.flatMap((t) => ERAS.map((e) => [t, e] as const)))('over %s, %s era', (transport, era) => {
  it('declares resources.subscribe', async () => {
    const { c } = await client(transport, era);
    expect(c.getServerCapabilities()?.resources).toEqual({ subscribe: true });
  });

  it('notifies a change a handler signals and one the refreshMs poll finds, and stops after unsubscribing', async () => {
    const { c, updates, next } = await client(transport, era);
    const unsubscribe = await subscribe(c, era, ['notes://signalled', 'notes://polled']);
    let got = next('notes://signalled');
    await call(c, 'bump');
    await got;
    got = next('notes://polled');
    await call(c, 'touch_polled');
    await got;
    // nothing else changed: one notification each
    expect(updates.filter((u) => u === 'notes://signalled')).toHaveLength(1);
    await unsubscribe();
    const before = updates.length;
    await call(c, 'bump');
    // a later subscription's notification arrives after any the bump would have caused on this client
    const again = await subscribe(c, era, ['notes://polled']);
    got = next('notes://polled');
    await call(c, 'touch_polled');
    await got;
    await again();
    expect(updates.slice(before)).toEqual(['notes://polled']);
  });

  it('refuses a subscription to a resource the policy denies, and never sends its changes', async () => {
    const { c, updates, next } = await client(transport, era);
    if (era === 'legacy') {
      const err = await rpcError((c as LegacyClient).subscribeResource({ uri: 'notes://secret' }));
      expect(err.code).toBe(-32602);
      expect((await rpcError((c as LegacyClient).subscribeResource({ uri: 'notes://nope' }))).code).toBe(-32602);
      // the same refusal as reading it
      expect((await rpcError(c.readResource({ uri: 'notes://secret' }))).code).toBe(err.code);
    } else if (transport === 'http') {
      // the listen request is checked as resources/subscribe is, before the stream opens
      await expect((c as ModernClient).listen({ resourceSubscriptions: ['notes://signalled', 'notes://secret'] })).rejects.toThrow(/notes:\/\/secret/);
    }
    if (era === 'modern' && transport === 'stdio') {
      // over stdio the SDK's entry acknowledges the stream; the connection never sends what it may not read
      const sub = await (c as ModernClient).listen({ resourceSubscriptions: ['notes://secret', 'notes://signalled'] });
      await call(c, 'bump_secret');
      const got = next('notes://signalled');
      await call(c, 'bump');
      await got;
      await sub.close();
    }
    expect(updates).not.toContain('notes://secret');
  });
});

describe('x-mcp-header', () => {
  type Listed = { tools: Array<{ name: string; inputSchema: { properties?: Record<string, Record<string, unknown>> } }> };

  it('marks header parameters and the arguments the manifest names', async () => {
    const { c } = await client('http', 'modern');
    const { tools } = (await c.listTools()) as Listed;
    const props = (name: string) => tools.find((t) => t.name === name)!.inputSchema.properties!;
    expect(props('getNote')['X-Tenant']!['x-mcp-header']).toBe('X-Tenant');
    // an array header cannot be mirrored (SEP-2243: string, integer, boolean)
    expect(props('getNote')['X-Trace']!['x-mcp-header']).toBeUndefined();
    expect(props('getNote').verbose!['x-mcp-header']).toBe('Verbose');
    expect(props('getNote').id!['x-mcp-header']).toBeUndefined();
    expect(props('echo_region').region!['x-mcp-header']).toBe('Region');
  });

  it('runs a call whose header the v2 client mirrors, and a legacy call without one', async () => {
    for (const era of ERAS) {
      const { c } = await client('http', era);
      expect(await call(c, 'echo_region', { region: 'eu-west' })).toMatchObject({ content: [{ type: 'text', text: 'region: eu-west' }] });
    }
  });

  /** A raw 2026-07-28 tools/call of echo_region over HTTP with `headers`. */
  const raw = async (region: string, headers: Record<string, string>) => {
    const body = {
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: {
        name: 'echo_region',
        arguments: { region },
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      },
    };
    const res = await fetch(http.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': 'echo_region',
        ...headers,
      },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    return {
      status: res.status,
      text,
      json: res.headers.get('content-type')?.includes('json') ? (JSON.parse(text) as { error?: { code: number; message: string } }) : undefined,
    };
  };

  it('refuses over HTTP a call whose Mcp-Param header disagrees with the body (400, -32020)', async () => {
    const mismatch = await raw('eu-west', { 'mcp-param-region': 'us-east' });
    expect(mismatch.status).toBe(400);
    expect(mismatch.json?.error?.code).toBe(-32020);
    expect(mismatch.json?.error?.message).toContain('Mcp-Param-Region');
    const missing = await raw('eu-west', {});
    expect(missing.status).toBe(400);
    expect(missing.json?.error?.code).toBe(-32020);
    const badBase64 = await raw('Hello', { 'mcp-param-region': '=?base64?SGVsbG8?=' });
    expect(badBase64.status).toBe(400);
    expect(badBase64.json?.error?.code).toBe(-32020);
    // agreeing values run: literal, and Base64 of UTF-8
    const literal = await raw('eu-west', { 'mcp-param-region': 'eu-west' });
    expect(literal.status).toBe(200);
    expect(literal.text).toContain('region: eu-west');
    const encoded = await raw('Zürich', { 'mcp-param-region': `=?base64?${Buffer.from('Zürich').toString('base64')}?=` });
    expect(encoded.status).toBe(200);
    expect(encoded.text).toContain('region: Zürich');
  });
});
