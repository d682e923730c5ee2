/**
 * `ctx.api` end to end: test/fixtures/api-client (the Petstore behind an API key, getPetById
 * excluded from the tool list, a composite `adopt_pet` tool that `uses` listPets and getPetById,
 * an audit trail) is built, compiled with tsc — the handler's calls are typed from the generated
 * types, and its `@ts-expect-error` lines prove an operation outside `uses` and a wrong argument
 * type do not compile — and served over stdio in both eras against the example's backend on
 * 127.0.0.1: both nested calls reach the backend with the key from the environment, the
 * excluded operation is callable only through the handler, each nested call has its audit lines
 * marked with the handler's callId, the policy's per-tool limit on the excluded operation counts
 * its nested calls, and a backend that never answers is cut at the timeout.
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBackend } from '../../examples/petstore/backend.mjs';
import { main } from '../../src/cli/main.js';
import type { AnyClient } from '../helpers/eras.js';
import { connectClient, ERAS, rpcError } from '../helpers/eras.js';
import { ROOT, run } from '../helpers/project.js';

const FIXTURE = path.join(ROOT, 'test/fixtures/api-client');
const work = path.join(ROOT, '.cache/api-client-e2e');
const project = path.join(work, 'server');
const KEY = 'key-0123456789abcdef';

type Backend = {
  url: string;
  server: { close(): void };
  requests: Array<{ method: string; path: string; query: string; headers: Record<string, string | undefined> }>;
};
type Event = {
  event: string;
  primitive?: string;
  callId?: string;
  parentCallId?: string;
  outcome?: string;
  httpStatus?: number;
  detail?: string;
  arguments?: unknown;
};
type Result = { isError?: boolean; content: Array<{ type: string; text?: string }>; structuredContent?: Record<string, unknown> };

let backend: Backend;
let silent: { url: string; server: http.Server };
const clients: AnyClient[] = [];

beforeAll(async () => {
  rmSync(work, { recursive: true, force: true });
  mkdirSync(path.join(project, 'src'), { recursive: true });
  cpSync(path.join(FIXTURE, 'mcpgen.yaml'), path.join(work, 'mcpgen.yaml'));
  cpSync(path.join(FIXTURE, 'openapi.yaml'), path.join(work, 'openapi.yaml'));
  cpSync(path.join(FIXTURE, 'handlers'), path.join(project, 'src/handlers'), { recursive: true });
  const io = { stdout: () => undefined, stderr: (s: string) => void process.stderr.write(s), cwd: ROOT };
  expect(await main(['build', path.relative(ROOT, path.join(work, 'mcpgen.yaml')), '--quiet'], io)).toBe(0);
  await run(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', project]);
  backend = (await startBackend({ port: 0 })) as Backend;
  const hung = http.createServer(() => undefined);
  await new Promise<void>((resolve) => hung.listen(0, '127.0.0.1', resolve));
  silent = { url: `http://127.0.0.1:${(hung.address() as AddressInfo).port}`, server: hung };
}, 180_000);

afterAll(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close().catch(() => undefined)));
  backend?.server.close();
  silent?.server.closeAllConnections();
  silent?.server.close();
});

/** A client of a fresh server process with its own audit file. */
async function connect(era: (typeof ERAS)[number], env: Record<string, string> = {}): Promise<{ client: AnyClient; audit: string }> {
  const audit = path.join(mkdtempSync(path.join(work, 'audit-')), 'trail.jsonl');
  const { client } = await connectClient(
    { kind: 'stdio', server: project, env: { APIFX_BASE_URL: backend.url, APIFX_API_KEY: KEY, APIFX_AUDIT_FILE: audit, ...env } },
    era,
  );
  clients.push(client);
  return { client, audit };
}

const events = (file: string): Event[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Event);

describe.each(ERAS)('a composite tool calling the API through ctx.api, %s era', (era) => {
  it('runs two operations (one not a tool) with the credential from the environment, each audited as a nested call', async () => {
    const { client, audit } = await connect(era);
    const names = (await client.listTools()).tools.map((t) => t.name).sort();
    expect(names).toEqual(['adopt_pet', 'adoption_fee', 'createPet', 'deletePet', 'listPets', 'store_inventory', 'updatePet']);
    // the excluded operation is no tool: only the handler reaches it
    expect((await rpcError(client.callTool({ name: 'getPetById', arguments: { petId: 1 } }))).code).toBe(-32602);

    const before = backend.requests.length;
    const result = (await client.callTool({ name: 'adopt_pet', arguments: { species: 'dog' } })) as Result;
    expect(result.isError, JSON.stringify(result)).toBeFalsy();
    expect(result.structuredContent).toEqual({ found: true, id: 1, name: 'Rex', status: 200 });

    // both requests reached the backend, with the key from APIFX_API_KEY
    const sent = backend.requests.slice(before);
    expect(sent.map((r) => `${r.method} ${r.path}${r.query}`)).toEqual(['GET /pets?status=available&tags=dog', 'GET /pets/1']);
    for (const r of sent) expect(r.headers['x-api-key']).toBe(KEY);

    // the handler's call, and one invoked and one completed line per nested call, marked with its callId
    const trail = events(audit);
    const parent = trail.find((e) => e.event === 'tool.invoked' && e.primitive === 'adopt_pet')!;
    expect(parent.parentCallId).toBeUndefined();
    const nested = trail.filter((e) => e.parentCallId === parent.callId);
    expect(nested.map((e) => `${e.event} ${e.primitive}`)).toEqual([
      'tool.invoked listPets',
      'tool.completed listPets',
      'tool.invoked getPetById',
      'tool.completed getPetById',
    ]);
    expect(nested.filter((e) => e.event === 'tool.completed').map((e) => [e.outcome, e.httpStatus])).toEqual([
      ['ok', 200],
      ['ok', 200],
    ]);
    expect(nested[0]!.arguments).toEqual({ status: 'available', tags: ['dog'] });
    expect(new Set(nested.map((e) => e.callId)).size).toBe(2);
    expect(nested.some((e) => e.callId === parent.callId)).toBe(false);
    expect(trail.find((e) => e.event === 'tool.completed' && e.callId === parent.callId)).toMatchObject({ primitive: 'adopt_pet', outcome: 'ok' });

    // the policy's limits count the nested calls: getPetById (no tool) allows one per minute per client
    const again = (await client.callTool({ name: 'adopt_pet', arguments: { species: 'dog' } })) as Result;
    expect(again.isError).toBe(true);
    expect(again.content[0]!.text).toMatch(/^Tool adopt_pet failed: getPetById: .*perMinute\.perClient/s);
    const second = events(audit).filter((e) => e.event === 'tool.invoked' && e.primitive === 'adopt_pet')[1]!;
    expect(events(audit).find((e) => e.parentCallId === second.callId && e.event === 'tool.limited')).toMatchObject({
      primitive: 'getPetById',
      outcome: 'limited',
    });

    // a tool without `uses` has an empty ctx.api
    const fee = (await client.callTool({ name: 'adoption_fee', arguments: { species: 'dog', ageYears: 2 } })) as Result;
    expect(JSON.parse(fee.content[0]!.text!)).toEqual({ fee: 150, apiMethods: 0 });
  }, 60_000);

  it('validates the arguments of a nested call, and honours the timeout: a backend that never answers fails the nested call, audited, and the handler reports it', async () => {
    const { client, audit } = await connect(era, { APIFX_BASE_URL: silent.url, APIFX_TIMEOUT_MS: '800' });
    // arguments a nested call's operation refuses never leave the server
    const invalid = (await client.callTool({ name: 'adopt_pet', arguments: { species: '' } })) as Result;
    expect(invalid.structuredContent).toEqual({ found: false, error: 'Invalid arguments for tool getPetById:\n- petId: must be >= 1' });
    const result = (await client.callTool({ name: 'adopt_pet', arguments: { species: 'cat' } })) as Result;
    expect(result.isError).toBe(true);
    expect(result.content[0]!.text).toMatch(/^Tool adopt_pet failed: listPets: Request to 127\.0\.0\.1:\d+ timed out after 800 ms .*raise APIFX_TIMEOUT_MS/);
    const trail = events(audit);
    const parent = trail.filter((e) => e.event === 'tool.invoked' && e.primitive === 'adopt_pet')[1]!;
    const nested = trail.filter((e) => e.parentCallId === parent.callId);
    expect(nested.map((e) => `${e.event} ${e.primitive} ${e.outcome ?? ''}`.trim())).toEqual(['tool.invoked listPets', 'tool.failed listPets error']);
    expect(nested[1]!.detail).toMatch(/timed out after 800 ms/);
  }, 60_000);
});
