/**
 * Completions and rich prompt content end to end (issue 21): the manifest of
 * test/fixtures/prompt-content is built into `.cache/prompt-content`, compiled, and driven by the
 * v1 SDK `Client` (legacy era) and the v2 `Client` pinned to 2026-07-28 (modern era), over stdio
 * and over Streamable HTTP.
 * - `completion/complete` of a prompt argument bound to an OpenAPI parameter (an array whose items
 *   are a `$ref`'d enum), of one with a `complete:` list (prefix, case-insensitive, in order), of
 *   one with 150 values (100 sent, `total`, `hasMore`), of template variables (a `$ref`'d path
 *   parameter's enum, a list), an argument without values, and an unknown prompt (-32602);
 * - a prompt whose messages carry an image, audio, a declared resource read when the prompt is
 *   got, a file embedded at build time, a resource with a templated URI, and a resource link.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import type { AnyClient, Era, HttpProcess, TransportKind } from '../helpers/eras.js';
import { connectClient, ERAS, rpcError, startHttp, TRANSPORTS } from '../helpers/eras.js';
import { ROOT, run } from '../helpers/project.js';

const FIXTURE = path.join(ROOT, 'test/fixtures/prompt-content');
const work = path.join(ROOT, '.cache/prompt-content');
const project = path.join(work, 'server');
let http: HttpProcess;
const open: AnyClient[] = [];

beforeAll(async () => {
  rmSync(work, { recursive: true, force: true });
  // the template's handler, written where the manifest's `handler` points (the project's src/)
  mkdirSync(path.join(project, 'src/handlers'), { recursive: true });
  writeFileSync(
    path.join(project, 'src/handlers/care.ts'),
    'export function care(_uri: URL, variables: Record<string, string | string[]>) {\n  return `care of ${String(variables.species)}: ${String(variables.topic)}`;\n}\n',
  );
  const io = { stdout: () => undefined, stderr: (s: string) => void process.stderr.write(s), cwd: ROOT };
  expect(await main(['build', path.relative(ROOT, path.join(FIXTURE, 'mcpgen.yaml')), '--out', path.relative(ROOT, project), '--quiet'], io)).toBe(0);
  await run(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', project]);
  http = await startHttp(project, {});
}, 240_000);

afterAll(async () => {
  await Promise.all(open.splice(0).map((c) => c.close().catch(() => undefined)));
  http?.kill('SIGKILL');
});

async function client(transport: TransportKind, era: Era): Promise<AnyClient> {
  const { client: c } = await connectClient(transport === 'stdio' ? { kind: 'stdio', server: project, env: {} } : { kind: 'http', url: http.url }, era);
  open.push(c);
  return c;
}

type Completion = { completion: { values: string[]; total?: number; hasMore?: boolean } };
const complete = (c: AnyClient, ref: { type: 'ref/prompt'; name: string } | { type: 'ref/resource'; uri: string }, name: string, value: string) =>
  (c as { complete(p: unknown): Promise<Completion> }).complete({ ref, argument: { name, value } }).then((r) => r.completion);
const prompt = (name: string) => ({ type: 'ref/prompt' as const, name });
const TEMPLATE = { type: 'ref/resource' as const, uri: 'petstore://species/{species}/care/{topic}' };
const PIXEL = readFileSync(path.join(FIXTURE, 'files/pixel.png')).toString('base64');
const BEEP = readFileSync(path.join(FIXTURE, 'files/beep.wav')).toString('base64');

describe.each(TRANSPORTS.flatMap((t) => ERAS.map((e) => [t, e] as const)))('over %s, %s era', (transport, era) => {
  it('declares completions and completes prompt arguments from an OpenAPI enum and from `complete:`', async () => {
    const c = await client(transport, era);
    expect(c.getServerCapabilities()?.completions).toEqual({});
    // findPetsByStatus's `status`: an array parameter whose items are a $ref'd enum
    expect(await complete(c, prompt('find_pets'), 'status', '')).toEqual({ values: ['available', 'pending', 'sold'], total: 3, hasMore: false });
    expect(await complete(c, prompt('find_pets'), 'status', 'p')).toEqual({ values: ['pending'], total: 1, hasMore: false });
    expect(await complete(c, prompt('find_pets'), 'status', 'x')).toEqual({ values: [], total: 0, hasMore: false });
    // the manifest's list: prefix match ignoring case, in the manifest's order
    expect(await complete(c, prompt('find_pets'), 'tone', 'F')).toEqual({ values: ['friendly', 'formal', 'Funny', 'friendlier'], total: 4, hasMore: false });
    expect(await complete(c, prompt('find_pets'), 'tone', 'fri')).toEqual({ values: ['friendly', 'friendlier'], total: 2, hasMore: false });
    // an argument without values, and one the prompt does not have: nothing to offer
    expect(await complete(c, prompt('find_pets'), 'free', 'a')).toEqual({ values: [], total: 0, hasMore: false });
    expect(await complete(c, prompt('find_pets'), 'nope', 'a')).toEqual({ values: [], total: 0, hasMore: false });
    // at most 100 values, with the total and hasMore
    const many = await complete(c, prompt('many'), 'code', 'v');
    expect(many.values).toHaveLength(100);
    expect(many.values[0]).toBe('v000');
    expect(many.values[99]).toBe('v099');
    expect(many).toMatchObject({ total: 150, hasMore: true });
    expect(await complete(c, prompt('many'), 'code', 'v14')).toEqual({ values: Array.from({ length: 10 }, (_, i) => `v14${i}`), total: 10, hasMore: false });
    expect((await rpcError(complete(c, prompt('no_such_prompt'), 'x', ''))).code).toBe(-32602);
  });

  it('completes resource-template variables (a $ref’d path parameter’s enum, a list)', async () => {
    const c = await client(transport, era);
    expect(await complete(c, TEMPLATE, 'species', 'f')).toEqual({ values: ['fish', 'ferret'], total: 2, hasMore: false });
    expect(await complete(c, TEMPLATE, 'topic', 'g')).toEqual({ values: ['grooming', 'games'], total: 2, hasMore: false });
    expect((await rpcError(complete(c, { type: 'ref/resource', uri: 'petstore://nope/{x}' }, 'x', ''))).code).toBe(-32602);
  });

  it('gets a prompt with an image, audio, embedded resources (declared, embedded file, templated URI) and a resource link', async () => {
    const c = await client(transport, era);
    const got = (await (c as { getPrompt(p: unknown): Promise<{ messages: unknown[] }> }).getPrompt({ name: 'pet_card', arguments: { pet: 'Rex' } })).messages;
    expect(got).toEqual([
      { role: 'user', content: { type: 'image', data: PIXEL, mimeType: 'image/png' } },
      { role: 'user', content: { type: 'audio', data: BEEP, mimeType: 'audio/wav' } },
      // a declared resource, read when the prompt is got
      { role: 'user', content: { type: 'resource', resource: { uri: 'petstore://docs/handbook', mimeType: 'text/markdown', text: '# Handbook' } } },
      // a file embedded at build time (text: UTF-8 and a textual MIME type)
      {
        role: 'user',
        content: { type: 'resource', resource: { uri: 'petstore://care/sheet', mimeType: 'text/markdown', text: '# Care sheet\n\nFeed twice a day.\n' } },
      },
      // URI and text are templates over the arguments
      { role: 'user', content: { type: 'resource', resource: { uri: 'petstore://pets/Rex/notes', text: 'Notes about Rex.' } } },
      // a link to a declared resource: its name, description and MIME type
      { role: 'user', content: { type: 'resource_link', uri: 'petstore://brand/logo', name: 'logo', description: 'The logo.', mimeType: 'image/png' } },
      { role: 'assistant', content: { type: 'text', text: 'Here is Rex.' } },
    ]);
  });
});
