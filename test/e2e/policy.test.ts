/**
 * The policy layer end to end (examples/petstore-policy, checked against its manifest, compiled,
 * served over Streamable HTTP with three client tokens against the example's backend): each
 * identity sees its own tool list and is refused per the access rules (by annotation, tag,
 * concern — failing closed for an unmapped tool — and name), every refusal is audited; limits
 * answer with which limit and when to retry; 200 concurrent calls from 4 clients leave exactly
 * one invoked and one terminal event per call in a chained audit file that `verify-audit`
 * accepts, and names the line edited by hand.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBackend } from '../../examples/petstore/backend.mjs';
import { main } from '../../src/cli/main.js';
import type { AnyClient, Era, HttpProcess } from '../helpers/eras.js';
import { connectClient, rpcError, startHttp } from '../helpers/eras.js';
import { ROOT, run } from '../helpers/project.js';

const work = path.join(ROOT, '.cache/policy-e2e');
const project = path.join(work, 'server');
const TOKENS = { reader: 'reader-token-0123456789abcdef', clerk: 'clerk-token-0123456789abcdef', admin: 'admin-token-0123456789abcdef' };
type Identity = keyof typeof TOKENS;
type Backend = { url: string; server: { close(): void }; requests: Array<{ method: string; path: string }> };
type Event = {
  time: string;
  id: string;
  event: string;
  session: string | null;
  client: string;
  era: string;
  primitive?: string;
  callId?: string;
  arguments?: unknown;
  outcome?: string;
  httpStatus?: number;
  durationMs?: number;
  detail?: string;
  prev?: string;
};
type Result = { isError?: boolean; content: Array<{ type: string; text?: string }> };

let backend: Backend;
let http: HttpProcess;
let auditFile = '';
const open: AnyClient[] = [];

beforeAll(async () => {
  rmSync(work, { recursive: true, force: true });
  cpSync(path.join(ROOT, 'examples/petstore-policy/server'), project, { recursive: true, filter: (src) => !/[\\/](node_modules|dist|audit)$/.test(src) });
  const io = { stdout: () => undefined, stderr: (s: string) => void process.stderr.write(s), cwd: ROOT };
  expect(await main(['build', 'examples/petstore-policy/mcpgen.yaml', '--out', path.relative(ROOT, project), '--check'], io)).toBe(0);
  await run(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', project]);
  backend = (await startBackend({ port: 0 })) as Backend;
  auditFile = path.join(mkdtempSync(path.join(work, 'audit-')), 'trail.jsonl');
  http = await startHttp(project, {
    PETSTORE_POLICY_BASE_URL: backend.url,
    PETSTORE_POLICY_AUDIT_FILE: auditFile,
    PETSTORE_POLICY_HTTP_TOKENS: Object.entries(TOKENS)
      .map(([name, token]) => `${name}=${token}`)
      .join(','),
  });
}, 180_000);

afterAll(async () => {
  await Promise.all(open.splice(0).map((c) => c.close().catch(() => undefined)));
  http?.kill('SIGKILL');
  backend?.server.close();
});

async function as(identity: Identity, era: Era): Promise<AnyClient> {
  const { client } = await connectClient({ kind: 'http', url: http.url, headers: { authorization: `Bearer ${TOKENS[identity]}` } }, era, {
    name: `policy-${identity}`,
  });
  open.push(client);
  return client;
}

const events = (): Event[] =>
  readFileSync(auditFile, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Event);

const names = async (c: AnyClient) => (await c.listTools()).tools.map((t) => t.name).sort();

describe.each(['legacy', 'modern'] as const)('access per client identity, %s era', (era) => {
  it('lists each identity its own tools', async () => {
    expect(await names(await as('reader', era))).toEqual(['getInventory', 'getPetById', 'listPets']);
    expect(await names(await as('clerk', era))).toEqual(['createPet', 'getPetById', 'listPets']);
    expect(await names(await as('admin', era))).toEqual(['createPet', 'getInventory', 'getPetById', 'listPets', 'updatePet']);
  });

  it('refuses by annotation, tag and concern (failing closed for an unmapped tool) and by name, and audits each refusal', async () => {
    const before = backend.requests.length;
    const cases: Array<[Identity, string, Record<string, unknown>, string]> = [
      ['reader', 'createPet', { body: { name: 'Nope' } }, 'rules: only read-only tools'],
      ['clerk', 'getInventory', {}, 'no risk mapping: a rule on risk does not match it'],
      ['clerk', 'updatePet', { petId: 1, body: { name: 'Rex' } }, 'risk high'],
      ['admin', 'deletePet', { petId: 1 }, 'denied by name'],
    ];
    for (const [who, tool, args] of cases) {
      const c = await as(who, era);
      const err = await rpcError(c.callTool({ name: tool, arguments: args }));
      expect(err.code).toBe(-32602);
      expect(err.message).toContain(`Tool ${tool} is not available to client "${who}"`);
      const denied = events().filter((e) => e.event === 'tool.denied' && e.client === who && e.primitive === tool && e.era === era);
      expect(denied.length, `${who} ${tool}`).toBeGreaterThan(0);
      expect(denied.at(-1)!.detail).toMatch(/policy\.access\.(rules\[\d\]|default)/);
    }
    expect(backend.requests.length).toBe(before);
  });
});

describe('audit trail', () => {
  it('records arguments with configured fields redacted, the HTTP status and the session of legacy clients', async () => {
    const c = await as('clerk', 'legacy');
    const result = (await c.callTool({ name: 'createPet', arguments: { body: { name: 'Whiskers', status: 'available' } } })) as Result;
    expect(result.isError).toBeFalsy();
    const trail = events().filter((e) => e.client === 'clerk' && e.primitive === 'createPet' && e.era === 'legacy');
    const invoked = trail.filter((e) => e.event === 'tool.invoked').at(-1)!;
    expect(invoked.arguments).toEqual({ body: { name: '[redacted]', status: 'available' } });
    expect(JSON.stringify(events())).not.toContain('Whiskers');
    const completed = trail.find((e) => e.event === 'tool.completed' && e.callId === invoked.callId)!;
    expect(completed).toMatchObject({ outcome: 'ok', httpStatus: 201, era: 'legacy' });
    expect(typeof completed.session).toBe('string');
    expect(events().some((e) => e.event === 'session.opened' && e.session === completed.session && e.client === 'clerk')).toBe(true);
    // no session in the modern era, and no session events
    const m = await as('clerk', 'modern');
    await m.callTool({ name: 'getPetById', arguments: { petId: 1 } });
    const modern = events().filter((e) => e.era === 'modern');
    expect(modern.length).toBeGreaterThan(0);
    expect(modern.every((e) => e.session === null && !e.event.startsWith('session.'))).toBe(true);
  });

  it('200 concurrent calls from 4 clients: one invoked and one terminal event each, every line JSON, chain verified; a hand edit is found', async () => {
    const clients = await Promise.all([as('reader', 'legacy'), as('reader', 'modern'), as('clerk', 'legacy'), as('admin', 'modern')]);
    const startLine = events().length;
    await Promise.all(clients.flatMap((c) => Array.from({ length: 50 }, (_, i) => c.callTool({ name: 'getPetById', arguments: { petId: 1 + (i % 3) } }))));
    const lines = readFileSync(auditFile, 'utf8')
      .split('\n')
      .filter((l) => l !== '');
    for (const l of lines) expect(() => JSON.parse(l)).not.toThrow();
    const batch = lines
      .slice(startLine)
      .map((l) => JSON.parse(l) as Event)
      .filter((e) => e.primitive === 'getPetById');
    const byCall = new Map<string, string[]>();
    for (const e of batch) byCall.set(e.callId!, [...(byCall.get(e.callId!) ?? []), e.event]);
    expect(byCall.size).toBe(200);
    // the terminal event is `tool.completed`, or `tool.limited` for a call over maxConcurrent (16)
    for (const [, kinds] of byCall) {
      expect(kinds.filter((k) => k === 'tool.invoked')).toHaveLength(1);
      expect(kinds.filter((k) => k !== 'tool.invoked')).toEqual([expect.stringMatching(/^tool\.(completed|limited)$/)]);
    }
    expect(batch.filter((e) => e.event === 'tool.completed').length).toBeGreaterThan(0);

    const verify = promisify(execFile);
    const script = path.join(project, 'dist/runtime/policy/verify-audit.js');
    const ok = await verify(process.execPath, [script, auditFile]);
    expect(ok.stdout.trim()).toBe(`ok: ${lines.length} lines`);
    // an edit by hand: the line names the first one broken
    const copy = path.join(path.dirname(auditFile), 'edited.jsonl');
    const edited = [...lines];
    edited[10] = edited[10]!.replace('"getPetById"', '"getPetByld"').replace('"createPet"', '"createPat"').replace('"tool.', '"tooI.');
    expect(edited[10]).not.toBe(lines[10]);
    writeFileSync(copy, edited.join('\n') + '\n');
    const bad = await verify(process.execPath, [script, copy]).then(
      () => undefined,
      (e: { code: number; stdout: string }) => e,
    );
    expect(bad?.code).toBe(1);
    expect(bad?.stdout).toMatch(/^line 11: /);
  }, 120_000);
});

describe('audit failure', () => {
  it('fails a call closed (-32603) when its event cannot be written, and sends nothing upstream', async () => {
    // the trail's directory is a file: no line can be appended
    const blocker = path.join(mkdtempSync(path.join(work, 'blocked-')), 'not-a-dir');
    writeFileSync(blocker, '');
    const p = await startHttp(project, {
      PETSTORE_POLICY_BASE_URL: backend.url,
      PETSTORE_POLICY_AUDIT_FILE: path.join(blocker, 'trail.jsonl'),
      PETSTORE_POLICY_HTTP_TOKENS: `admin=${TOKENS.admin}`,
    });
    try {
      const { client } = await connectClient({ kind: 'http', url: p.url, headers: { authorization: `Bearer ${TOKENS.admin}` } }, 'modern');
      open.push(client);
      const before = backend.requests.length;
      const err = await rpcError(client.callTool({ name: 'getPetById', arguments: { petId: 1 } }));
      expect(err.code).toBe(-32603);
      expect(err.message).toMatch(/audit/i);
      expect(backend.requests.length).toBe(before);
    } finally {
      p.kill('SIGKILL');
    }
  });
});

describe('limits', () => {
  it('answers a call over its per-client rate with which limit and when to retry, and audits it', async () => {
    const c = await as('admin', 'modern');
    let limited: Result | undefined;
    for (let i = 0; i < 31 && !limited; i++) {
      const r = (await c.callTool({ name: 'createPet', arguments: { body: { name: `Bulk ${i}` } } })) as Result;
      if (r.isError) limited = r;
    }
    expect(limited, 'the 31st call within a minute').toBeDefined();
    expect(limited!.content[0]!.text).toMatch(/over its limit of 30 calls per minute for client "admin".*retry in \d+ s/);
    expect(events().some((e) => e.event === 'tool.limited' && e.client === 'admin' && e.primitive === 'createPet')).toBe(true);
  });
});
