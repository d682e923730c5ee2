/**
 * The generated server of test/e2e/scale-out.test.ts: a spec and manifest with a reflection gate
 * (host mode), limits, a signalled resource, a list change, a question to the user, and concerns (so `listChanged` is
 * declared), built and compiled into `<work>/server`; and its backend on 127.0.0.1, which holds
 * `GET /hold/<tag>` requests until released (so concurrency is observed exactly) and counts
 * `POST /notes` and the tasks that saw their cancel (`POST /stopped`).
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { expect } from 'vitest';
import { main } from '../../src/cli/main.js';
import { ROOT, run } from './project.js';

export const SPEC = `openapi: 3.0.3
info: { title: Scaled, version: 1.0.0 }
servers: [{ url: http://127.0.0.1:9 }]
paths:
  /hold/{tag}:
    get:
      operationId: hold
      summary: Waits until the test lets it answer
      parameters: [{ name: tag, in: path, required: true, schema: { type: string } }]
      responses: { '200': { description: ok, content: { application/json: { schema: { type: object } } } } }
  /notes:
    post:
      operationId: addNote
      requestBody: { content: { application/json: { schema: { type: object, properties: { text: { type: string } } } } } }
      responses: { '201': { description: ok, content: { application/json: { schema: { type: object } } } } }
  /pets/{id}:
    delete:
      operationId: deletePet
      parameters: [{ name: id, in: path, required: true, schema: { type: string } }]
      responses: { '204': { description: gone } }
  /ping:
    get:
      operationId: ping
      responses: { '200': { description: ok, content: { application/json: { schema: { type: object } } } } }
`;
export const MANIFEST = `name: scaled
version: 1.0.0
openapi: ./openapi.yaml
output: ./server
extraTools:
  - name: bump
    description: Changes the note and says so (notifyResourceUpdated).
    inputSchema: { type: object, properties: {}, additionalProperties: false }
    handler: handlers/notes.ts#bump
  - name: relist
    description: Says the tool list changed (notifyListChanged).
    inputSchema: { type: object, properties: {}, additionalProperties: false }
    handler: handlers/notes.ts#relist
  - name: ask
    description: Asks the user a question (an input round in 2026-07-28).
    inputSchema: { type: object, properties: {}, additionalProperties: false }
    handler: handlers/notes.ts#ask
  - name: brew
    description: Takes a moment; runs as an MCP task when asked.
    inputSchema: { type: object, properties: {}, additionalProperties: false }
    handler: handlers/notes.ts#brew
    task: optional
  - name: steep
    description: Runs until cancelled (as an MCP task), then tells the backend.
    inputSchema: { type: object, properties: {}, additionalProperties: false }
    handler: handlers/notes.ts#steep
    task: required
concerns:
  - name: risk
    values: [low, high]
resources:
  - uri: notes://signalled
    name: signalled
    handler: handlers/notes.ts#signalled
reflection:
  mode: host
  domains: [pets]
  gates:
    deletePet:
      domain: pets
      prompt: justify_removal
      promptArgs: { id: "{{id}}" }
      template: Why delete pet {{id}}?
policy:
  audit: { file: audit.jsonl, chain: true, stderr: false }
  limits:
    tools:
      hold: { maxConcurrent: 4, timeoutMs: 60000 }
      addNote: { perMinute: { overall: 60 } }
      ping: { maxConcurrent: 1000 }
      ask: { perMinute: { client: 1 } }
`;
export const HANDLERS = `import type { ExtraToolContext } from '../runtime/handlers.js';
import { notifyListChanged, notifyResourceUpdated } from '../runtime/handlers.js';
let n = 0;
export function relist() {
  notifyListChanged('tools');
  return 'relisted';
}
export function bump() {
  n++;
  notifyResourceUpdated('notes://signalled');
  return \`bumped \${n}\`;
}
export const signalled = () => \`note \${n}\`;
export async function brew() {
  await new Promise((resolve) => setTimeout(resolve, 300));
  return 'brewed';
}
export async function steep(_args: unknown, ctx: ExtraToolContext) {
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, 60_000);
    ctx.signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });
  if (ctx.signal.aborted) await fetch(\`\${process.env.SCALED_BASE_URL}/stopped\`, { method: 'POST' }).catch(() => undefined);
  return 'steeped';
}
export async function ask(_args: unknown, ctx: ExtraToolContext) {
  const answer = await ctx.elicit('name?', { properties: { name: { type: 'string' } }, required: ['name'] });
  return \`asked: \${JSON.stringify(answer)}\`;
}
`;

/** Builds and compiles the server into `<work>/server`; returns that folder. */
export async function buildScaledServer(work: string): Promise<string> {
  const project = path.join(work, 'server');
  rmSync(work, { recursive: true, force: true });
  mkdirSync(path.join(project, 'src/handlers'), { recursive: true });
  writeFileSync(path.join(project, 'src/handlers/notes.ts'), HANDLERS);
  writeFileSync(path.join(work, 'openapi.yaml'), SPEC);
  writeFileSync(path.join(work, 'mcpgen.yaml'), MANIFEST);
  const io = { stdout: () => undefined, stderr: (s: string) => void process.stderr.write(s), cwd: ROOT };
  expect(await main(['build', path.relative(ROOT, path.join(work, 'mcpgen.yaml')), '--out', path.relative(ROOT, project), '--quiet'], io)).toBe(0);
  await run(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', project]);
  return project;
}

/** The backend: its URL, the /hold requests it holds, how many notes it stored. */
export type ScaledBackend = {
  readonly url: string;
  readonly held: ServerResponse[];
  readonly notes: () => number;
  readonly stopped: () => number;
  release(): void;
  close(): void;
};

/** Starts the backend on a free loopback port. */
export async function startScaledBackend(): Promise<ScaledBackend> {
  const held: ServerResponse[] = [];
  let notes = 0;
  let stopped = 0;
  function handle(req: IncomingMessage, res: ServerResponse): void {
    req.on('data', () => undefined);
    req.on('end', () => {
      if (req.url?.startsWith('/hold/')) {
        held.push(res);
        res.on('close', () => {
          const i = held.indexOf(res);
          if (i >= 0) held.splice(i, 1);
        });
        return;
      }
      if (req.url === '/notes') notes++;
      if (req.url === '/stopped') stopped++;
      if (req.method === 'DELETE') return void res.writeHead(204).end();
      res.writeHead(req.method === 'POST' ? 201 : 200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
  }
  function release(): void {
    for (const res of held.splice(0)) res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  }
  const api = createServer(handle);
  await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(api.address() as AddressInfo).port}`,
    held,
    notes: () => notes,
    stopped: () => stopped,
    release,
    close: () => {
      release();
      api.closeAllConnections();
      api.close();
    },
  };
}
