/**
 * examples/petstore-code (code mode with a preset in list mode, an access rule and a gated
 * operation), built and compiled from its committed manifest and served over stdio against a
 * recording backend: a client without a preset lists the code tools and its code filters pets; the
 * front-desk preset lists its tools; client intern's code is refused updatePet naming the rule;
 * deletePet from code rejects with the gate's instructions and sends nothing, and runs once the
 * justification is stored. Then a spec behind an API key: the API gets the key, the code and every
 * answer, log and audit line never hold it.
 */

import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import type { AnyClient } from '../helpers/eras.js';
import { connectClient } from '../helpers/eras.js';
import { ROOT, run } from '../helpers/project.js';

const work = path.join(ROOT, '.cache/code-mode-example');
const server = path.join(work, 'server');
const requests: string[] = [];
let backend: http.Server;
let env: Record<string, string>;
const clients: AnyClient[] = [];
const text = (r: unknown): string => ((r as { content: Array<{ text?: string }> }).content ?? []).map((c) => c.text ?? '').join('\n');

beforeAll(async () => {
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const manifest = readFileSync(path.join(ROOT, 'examples/petstore-code/mcpgen.yaml'), 'utf8').replace(
    'openapi: ../petstore/openapi.yaml',
    `openapi: ${JSON.stringify(path.join(ROOT, 'examples/petstore/openapi.yaml'))}`,
  );
  writeFileSync(path.join(work, 'mcpgen.yaml'), manifest);
  const io = { stdout: () => undefined, stderr: (s: string) => void process.stderr.write(s), cwd: work };
  expect(await main(['build', 'mcpgen.yaml', '--quiet'], io)).toBe(0);
  await run(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', server], { maxBuffer: 16 * 1024 * 1024 });
  backend = http.createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        items: [
          { id: 1, name: 'Tom', tag: 'cat', status: 'available' },
          { id: 2, name: 'Rex', tag: 'dog', status: 'available' },
          { id: 3, name: 'Kit', tag: 'cat', status: 'sold' },
        ],
        total: 3,
      }),
    );
  });
  await new Promise<void>((r) => backend.listen(0, '127.0.0.1', r));
  env = {
    PETSTORE_CODE_BASE_URL: `http://127.0.0.1:${(backend.address() as { port: number }).port}`,
    PETSTORE_CODE_AUDIT_FILE: path.join(work, 'audit.jsonl'),
    PETSTORE_CODE_REFLECTION_DIR: path.join(work, 'store'),
  };
}, 300_000);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  backend?.close();
});

async function client(name = 'local'): Promise<AnyClient> {
  const c = await connectClient({ kind: 'stdio', server, env: { ...env, PETSTORE_CODE_CLIENT: name } }, 'modern');
  clients.push(c.client);
  return c.client;
}

describe('examples/petstore-code', () => {
  it('lists the code tools without a preset, the front-desk tools with it', async () => {
    const c = await client();
    expect((await c.listTools()).tools.map((t) => t.name)).toEqual(['search_tools', 'describe_tool', 'execute', 'persist_justification']);
    const desk = await c.listTools({ _meta: { 'io.mcpgen/concernPreset': 'front-desk' } });
    expect(desk.tools.map((t) => t.name).sort()).toEqual(['createPet', 'getInventory', 'getPetById', 'listPets', 'persist_justification'].sort());
  });

  it('runs the README example: the cats, by name', async () => {
    const c = await client();
    expect(text(await c.callTool({ name: 'describe_tool', arguments: { name: 'listPets' } }))).toContain(
      'api.listPets(args: { limit?: number; status?: "available" | "pending" | "sold"; tags?: string[] }): Promise<{ items?: (Array<{ id?: number | null; name?: string | null; tag?: string | null',
    );
    const r = await c.callTool({
      name: 'execute',
      arguments: {
        code: `const { items } = await api.listPets({ limit: 50 });\nreturn items.filter((p: { tag?: string }) => p.tag === 'cat').map((p: { name: string }) => p.name);`,
      },
    });
    expect(text(r).split('\n', 1)[0]).toBe('["Tom","Kit"]');
  });

  it("refuses intern's updatePet from code, naming the rule, and holds deletePet at the gate", async () => {
    const intern = await client('intern');
    requests.length = 0;
    const denied = await intern.callTool({ name: 'execute', arguments: { code: `return await api.updatePet({ petId: 1, body: { name: 'Tim' } })` } });
    expect(denied.isError).toBe(true);
    expect(text(denied)).toContain('policy.access.rules[0]');
    const gated = await intern.callTool({ name: 'execute', arguments: { code: `return await api.deletePet({ petId: 1 })` } });
    expect(gated.isError).toBe(true);
    expect(text(gated)).toContain('the reflection gate holds deletePet');
    expect(text(gated)).toContain('justify_pet_removal');
    expect(text(gated)).toContain('Then run execute again with the same code.');
    expect(requests).toEqual([]);
    // the host flow from code: store the justification the refusal asked for, run the same code again
    const hash = /"hash": "([^"]+)"/.exec(text(gated))![1]!;
    const justification = { intent: 'remove a duplicate record', alternatives: ['mark it sold'], choice: 'delete: it is a duplicate', confidence: 0.9 };
    const stored = await intern.callTool({ name: 'persist_justification', arguments: { hash, domain: 'pets', justification } });
    expect(stored.isError).toBeFalsy();
    const again = await intern.callTool({ name: 'execute', arguments: { code: `return await api.deletePet({ petId: 1 })` } });
    expect(again.isError, text(again)).toBeFalsy();
    expect(requests).toEqual(['DELETE /pets/1']);
  });
});

describe('credentials stay outside the sandbox', () => {
  const dir = path.join(ROOT, '.cache/code-mode-credentials');
  const KEY = 'sk-live-0123456789abcdef-code-mode-secret';
  const seen: Array<string | undefined> = [];
  let api: http.Server;
  let c: AnyClient;
  let stderr: () => string;

  beforeAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    // the api-client fixture's spec: every operation needs the X-Api-Key header
    writeFileSync(
      path.join(dir, 'mcpgen.yaml'),
      `name: cmk\nversion: 1.0.0\nopenapi: ${JSON.stringify(path.join(ROOT, 'test/fixtures/api-client/openapi.yaml'))}\noutput: ./server\nauth:\n  apiKey: { env: CMK_API_KEY }\ndiscovery: code\npolicy:\n  audit:\n    file: audit.jsonl\n`,
    );
    expect(await main(['build', 'mcpgen.yaml', '--quiet'], { stdout: () => undefined, stderr: (t: string) => void process.stderr.write(t), cwd: dir })).toBe(0);
    await run(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', path.join(dir, 'server')], { maxBuffer: 16 * 1024 * 1024 });
    api = http.createServer((req, res) => {
      seen.push(req.headers['x-api-key'] as string | undefined);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ items: [{ id: 1, name: 'Tom' }], total: 1 }));
    });
    await new Promise<void>((r) => api.listen(0, '127.0.0.1', r));
    const connected = await connectClient(
      {
        kind: 'stdio',
        server: path.join(dir, 'server'),
        env: { CMK_BASE_URL: `http://127.0.0.1:${(api.address() as { port: number }).port}`, CMK_API_KEY: KEY, CMK_AUDIT_FILE: path.join(dir, 'audit.jsonl') },
      },
      'modern',
    );
    c = connected.client;
    stderr = connected.stderr;
    clients.push(c);
  }, 300_000);

  afterAll(() => api?.close());

  it('the API gets the key; code that hunts for it finds nothing, and no answer, log or audit line holds it', async () => {
    const code = `
      const found = [];
      for (const name of Object.getOwnPropertyNames(globalThis)) found.push(name);
      const e = await api.listPets({ limit: 1 });
      let thrown = '';
      try { await api.getPetById({ petId: 'x' }); } catch (err) { thrown = String(err.message) + String(err.body); }
      console.log(JSON.stringify(e), thrown);
      return { found, e, env: typeof process, headers: JSON.stringify(e).includes('X-Api-Key') };
    `;
    const r = await c.callTool({ name: 'execute', arguments: { code } });
    expect(r.isError, text(r)).toBeFalsy();
    expect(seen).toEqual([KEY]);
    expect(text(r)).not.toContain(KEY);
    expect(JSON.parse(text(r).split('\n', 1)[0]!)).toMatchObject({ env: 'undefined', headers: false });
    expect(stderr()).not.toContain(KEY);
    expect(readFileSync(path.join(dir, 'audit.jsonl'), 'utf8')).not.toContain(KEY);
  });

  it('the audit keeps the code text only with CMK_CODE_AUDIT_TEXT, cut to it, and never a credential in it', async () => {
    const env = {
      CMK_BASE_URL: `http://127.0.0.1:${(api.address() as { port: number }).port}`,
      CMK_API_KEY: KEY,
      CMK_AUDIT_FILE: path.join(dir, 'audit.jsonl'),
    };
    // code that holds the key itself (pasted by a model that saw it somewhere)
    const code = (tag: string) => `const key = '${KEY}'; // ${tag}\nreturn key.length + ${'1'.repeat(50)};`;
    const records = () =>
      readFileSync(path.join(dir, 'audit.jsonl'), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { event: string; primitive?: string; arguments?: { code?: string; codeSha256?: string; codeChars?: number } })
        .filter((e) => e.event === 'tool.invoked' && e.primitive === 'execute');
    // default: hash and length, no text
    const r1 = await c.callTool({ name: 'execute', arguments: { code: code('default') } });
    expect(r1.isError, text(r1)).toBeFalsy();
    expect(records().at(-1)!.arguments).toMatchObject({ code: '[redacted]', codeChars: code('default').length });
    // set: the text, cut to the setting's characters, the key scrubbed
    const { client: kept } = await connectClient({ kind: 'stdio', server: path.join(dir, 'server'), env: { ...env, CMK_CODE_AUDIT_TEXT: '80' } }, 'legacy');
    clients.push(kept);
    const r2 = await kept.callTool({ name: 'execute', arguments: { code: code('kept') } });
    expect(r2.isError, text(r2)).toBeFalsy();
    const audited = records().at(-1)!.arguments!;
    expect(audited.codeChars).toBe(code('kept').length);
    expect(audited.code).toMatch(/^const key = '\[redacted\]'; \/\/ kept\nreturn …/);
    // at most 80 characters, cut before the word the 80th is in (\`key.length\`)
    expect(audited.code).toBe(
      `${code('kept').slice(0, code('kept').indexOf('key.length'))}…[+${code('kept').length - code('kept').indexOf('key.length')} characters]`.replace(
        KEY,
        '[redacted]',
      ),
    );
    expect(readFileSync(path.join(dir, 'audit.jsonl'), 'utf8')).not.toContain(KEY);
    // a cut that falls inside the key keeps none of it (the scrubbing only knows the whole key)
    const { client: cut } = await connectClient({ kind: 'stdio', server: path.join(dir, 'server'), env: { ...env, CMK_CODE_AUDIT_TEXT: '20' } }, 'legacy');
    clients.push(cut);
    const r3 = await cut.callTool({ name: 'execute', arguments: { code: code('cut') } });
    expect(r3.isError, text(r3)).toBeFalsy();
    const partly = records().at(-1)!.arguments!;
    expect(partly.code).toMatch(/^const key = …\[\+\d+ characters\]$/);
    expect(readFileSync(path.join(dir, 'audit.jsonl'), 'utf8')).not.toContain(KEY.slice(0, 7));
  });
});
