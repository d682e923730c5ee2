/**
 * MCP tasks end to end (issue 21): test/fixtures/tasks is built into `.cache/tasks`, compiled, and
 * driven against a local API on 127.0.0.1 (test/helpers/tasks.ts) by real clients over stdio and
 * Streamable HTTP:
 * - 2025-11-25: the v1 SDK `Client` and its `client.experimental.tasks` (params.task, tasks/get,
 *   tasks/result, tasks/list, tasks/cancel);
 * - 2026-07-28: the v2 `Client` pinned to 2026-07-28 with `@modelcontextprotocol/ext-tasks` (the
 *   extension declared per request; flat CreateTaskResult; tasks/get inlines the result).
 * The long-running operation answers 202 + Location, then 202 while running, then 200: run as a
 * task it is created, polled (with the API key, at the resolved URL), and its result is the final
 * body; cancelled mid-way the API gets its DELETE (the spec declares one), or polling just stops
 * (no DELETE declared). A `task: required` tool called without a task gets the era's error; over
 * HTTP another identity's task is unknown.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Client as ModernClient } from '@modelcontextprotocol/client';
import { createTaskSessionFromClient, resultFromTaskOutcome } from '@modelcontextprotocol/ext-tasks/client';
import type { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, CreateTaskResultSchema, TaskStatusNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import type { AnyClient, HttpProcess, Target, TransportKind } from '../helpers/eras.js';
import { connectClient, rpcError, startHttp, TRANSPORTS } from '../helpers/eras.js';
import { ROOT, run } from '../helpers/project.js';
import type { JobsApi } from '../helpers/tasks.js';
import { rawDispatch, startJobsApi } from '../helpers/tasks.js';

const FIXTURE = path.join(ROOT, 'test/fixtures/tasks');
const work = path.join(ROOT, '.cache/tasks');
const project = path.join(work, 'server');
const KEY = 'api-key-0123456789';
const TOKENS = { alice: 'alice-token-0123456789', bob: 'bob-token-0123456789' };
let api: JobsApi;
let http: HttpProcess;
const open: Array<{ close(): Promise<void> }> = [];

beforeAll(async () => {
  rmSync(work, { recursive: true, force: true });
  mkdirSync(path.join(project, 'src/handlers'), { recursive: true });
  writeFileSync(path.join(project, 'src/handlers/jobs.ts'), readFileSync(path.join(FIXTURE, 'handlers.ts')));
  for (const f of ['openapi.yaml', 'mcpgen.yaml']) writeFileSync(path.join(work, f), readFileSync(path.join(FIXTURE, f)));
  const io = { stdout: () => undefined, stderr: (s: string) => void process.stderr.write(s), cwd: ROOT };
  expect(await main(['build', path.relative(ROOT, path.join(work, 'mcpgen.yaml')), '--out', path.relative(ROOT, project), '--quiet'], io)).toBe(0);
  await run(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', project]);
  api = await startJobsApi(KEY);
  http = await startHttp(project, { ...env(), JOBS_HTTP_TOKENS: `alice=${TOKENS.alice},bob=${TOKENS.bob}` });
}, 240_000);

afterAll(async () => {
  for (const c of open) await c.close().catch(() => undefined);
  http?.kill();
  await api?.close();
});

function env(): Record<string, string> {
  return { JOBS_BASE_URL: api.base, JOBS_KEY: KEY };
}

function target(kind: TransportKind, who: keyof typeof TOKENS = 'alice'): Target {
  return kind === 'stdio'
    ? { kind: 'stdio', server: project, env: env() }
    : { kind: 'http', url: http.url, headers: { authorization: `Bearer ${TOKENS[who]}` } };
}

async function legacy(kind: TransportKind, who: keyof typeof TOKENS = 'alice'): Promise<LegacyClient> {
  const { client } = await connectClient(target(kind, who), 'legacy', { capabilities: { tasks: {} } as never });
  open.push(client);
  return client as LegacyClient;
}

/** A v2 client pinned to 2026-07-28 and its ext-tasks session (and the raw path, for probes). */
async function modern(kind: TransportKind, who: keyof typeof TOKENS = 'alice') {
  const { client } = await connectClient(target(kind, who), 'modern');
  const v2 = client as ModernClient;
  const dispatch = rawDispatch((v2 as unknown as { transport: Parameters<typeof rawDispatch>[0] }).transport);
  const framing = { protocolVersion: '2026-07-28', clientInfo: { name: 'e2e-modern', version: '1.0.0' }, clientCapabilities: {} };
  const session = createTaskSessionFromClient(v2, { endpointId: `tasks-e2e-${kind}-${who}`, rawDispatch: dispatch as never, v2RequestFraming: framing });
  open.push({ close: () => session.close() }, client);
  /** A raw request with the envelope (`tasks`: the extension declared). */
  const raw = async (method: string, params: Record<string, unknown>, tasks = true) => {
    const caps = tasks ? { extensions: { 'io.modelcontextprotocol/tasks': {} } } : {};
    const meta = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': framing.clientInfo,
      'io.modelcontextprotocol/clientCapabilities': caps,
    };
    return dispatch({ method, params: { _meta: meta, ...params } }) as Promise<
      { kind: 'result'; result: Record<string, unknown> } | { kind: 'error'; error: { code: number; message: string; data?: unknown } }
    >;
  };
  /** Sends a message on the client's transport as it is (a listen request, a cancellation). */
  const post = (message: unknown) => (v2 as unknown as { transport: { send(m: unknown): Promise<void> } }).transport.send(message);
  return { client: v2, session, raw, post, taskNotifications: dispatch.taskNotifications };
}

const textOf = (r: { content?: unknown }) => ((r.content as Array<{ type: string; text?: string }>) ?? []).map((c) => c.text ?? '').join('\n');

describe.each(TRANSPORTS)('tasks over %s', (kind) => {
  describe('2025-11-25 (v1 client, client.experimental.tasks)', () => {
    it('lists the task tools with execution.taskSupport and declares the tasks capability', async () => {
      const client = await legacy(kind);
      expect(client.getServerCapabilities()?.tasks).toMatchObject({ list: {}, cancel: {}, requests: { tools: { call: {} } } });
      const tools = (await client.listTools()).tools;
      const support = Object.fromEntries(tools.map((t) => [t.name, (t as { execution?: { taskSupport?: string } }).execution?.taskSupport]));
      expect(support).toMatchObject({
        startExport: 'optional',
        runReport: 'optional',
        brew: 'optional',
        bake: 'required',
        interview: 'optional',
        listPets: undefined,
        getOperation: undefined,
      });
    });

    it('runs a long-running operation as a task: created, polled with the API key at the resolved URL, its result the final body', async () => {
      const client = await legacy(kind);
      const seen: string[] = [];
      let result: { content?: unknown; structuredContent?: unknown } | undefined;
      for await (const message of client.experimental.tasks.callToolStream(
        { name: 'startExport', arguments: { body: { name: 'q3', steps: 2 } } },
        CallToolResultSchema,
        { task: { ttl: 60_000 } },
      )) {
        seen.push(message.type === 'taskStatus' ? `status:${message.task.status}` : message.type);
        if (message.type === 'result') result = message.result;
        if (message.type === 'error') throw message.error;
      }
      expect(seen[0]).toBe('taskCreated');
      expect(seen.at(-1)).toBe('result');
      expect(textOf(result!)).toContain('"rows":42');
      const id = [...api.ops.values()].filter((o) => o.kind === 'export').at(-1)!;
      expect(id.polls).toBe(3);
      expect(id.keyless).toBe(0);
    });

    it('cancels mid-way: the task is cancelled and the API gets the DELETE it declares', async () => {
      const client = await legacy(kind);
      const mark = api.count();
      const created = await client.request(
        { method: 'tools/call', params: { name: 'startExport', arguments: { body: { name: 'forever', steps: -1 } }, task: { ttl: 60_000 } } },
        CreateTaskResultSchema,
      );
      const op = await api.operationAfter(mark);
      await api.polled(op, 1);
      expect((await client.experimental.tasks.getTask(created.task.taskId)).status).toBe('working');
      const cancelled = await client.experimental.tasks.cancelTask(created.task.taskId);
      expect(cancelled.status).toBe('cancelled');
      await api.deleted(op);
      expect((await client.experimental.tasks.getTask(created.task.taskId)).status).toBe('cancelled');
      const listed = await client.experimental.tasks.listTasks();
      expect(listed.tasks.map((t) => t.taskId)).toContain(created.task.taskId);
    });

    it('cancels an operation the API offers no cancellation for: polling stops, nothing is deleted', async () => {
      const client = await legacy(kind);
      const mark = api.count();
      const created = await client.request(
        { method: 'tools/call', params: { name: 'runReport', arguments: { body: { steps: -1 } }, task: { ttl: 60_000 } } },
        CreateTaskResultSchema,
      );
      const op = await api.operationAfter(mark);
      await api.polled(op, 2);
      await client.experimental.tasks.cancelTask(created.task.taskId);
      // the poll in flight may still land; none after it (several poll intervals later)
      const after = api.ops.get(op)!.polls;
      await new Promise((r) => setTimeout(r, 800));
      expect(api.ops.get(op)!.polls).toBeLessThanOrEqual(after + 1);
      expect(api.ops.get(op)!.cancelled).toBe(false);
    });

    it('reads an Azure status case-insensitively: Failed ends the task failed, its result the error', async () => {
      const client = await legacy(kind);
      const created = await client.request(
        { method: 'tools/call', params: { name: 'runReport', arguments: { body: { steps: 1, fail: true } }, task: { ttl: 60_000 } } },
        CreateTaskResultSchema,
      );
      const result = await client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema);
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/status failed[\s\S]*disk full/);
      expect((await client.experimental.tasks.getTask(created.task.taskId)).status).toBe('failed');
    });

    it('refuses a status URL on another origin without polling it', async () => {
      const client = await legacy(kind);
      const result = await client.callTool({ name: 'runReport', arguments: { body: { steps: 1, elsewhere: true } } });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toContain('another origin');
      const op = [...api.ops.values()].filter((o) => o.kind === 'report').at(-1)!;
      expect(op.polls + op.keyless).toBe(0);
    });

    it('an optional task tool called without a task waits for the operation and returns its final body', async () => {
      const client = await legacy(kind);
      const result = await client.callTool({ name: 'runReport', arguments: { body: { steps: 2 } } });
      expect(result.isError).toBeFalsy();
      expect(textOf(result)).toContain('"total":7');
    });

    it('sends notifications/tasks/status as the task changes', async () => {
      const client = await legacy(kind);
      const seen: string[] = [];
      const done = new Promise<void>((resolve) =>
        client.setNotificationHandler(TaskStatusNotificationSchema, (n) => {
          seen.push(`${n.params.taskId}:${n.params.status}`);
          if (n.params.status === 'completed') resolve();
        }),
      );
      const created = await client.request(
        { method: 'tools/call', params: { name: 'brew', arguments: { ms: 50 }, task: { ttl: 60_000 } } },
        CreateTaskResultSchema,
      );
      await done;
      expect(seen).toEqual([`${created.task.taskId}:completed`]);
    });

    it('a task: required tool called without a task is -32601; with one it runs', async () => {
      const client = await legacy(kind);
      expect((await rpcError(client.callTool({ name: 'bake', arguments: {} }))).code).toBe(-32601);
      const created = await client.request({ method: 'tools/call', params: { name: 'bake', arguments: {}, task: { ttl: 60_000 } } }, CreateTaskResultSchema);
      expect(textOf(await client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema))).toBe('baked');
    });
  });

  describe('2026-07-28 (v2 client with @modelcontextprotocol/ext-tasks)', () => {
    it('declares the extension as exactly {} and no legacy tasks capability', async () => {
      const { client } = await modern(kind);
      const caps = client.getServerCapabilities() as Record<string, unknown>;
      expect(caps.tasks).toBeUndefined();
      expect((caps.extensions as Record<string, unknown>)['io.modelcontextprotocol/tasks']).toEqual({});
    });

    it('runs a long-running operation as a task and settles it with the final body', async () => {
      const { session } = await modern(kind);
      const execution = await session.callTool('startExport', { body: { name: 'modern', steps: 2 } });
      expect(execution.kind).toBe('task');
      const { outcome } = await execution.settle();
      const result = resultFromTaskOutcome(outcome) as { content?: unknown; isError?: boolean };
      expect(result.isError).toBeFalsy();
      expect(textOf(result)).toContain('"rows":42');
    });

    it('cancels mid-way: tasks/cancel acknowledges, the task ends cancelled, the API gets its DELETE', async () => {
      const { session, raw } = await modern(kind);
      const mark = api.count();
      const execution = await session.callTool('startExport', { body: { name: 'forever', steps: -1 } });
      expect(execution.kind).toBe('task');
      const taskId = execution.handle!.taskId;
      const op = await api.operationAfter(mark);
      await api.polled(op, 1);
      const ack = await raw('tasks/cancel', { taskId });
      expect(ack).toMatchObject({ kind: 'result', result: { resultType: 'complete' } });
      await api.deleted(op);
      const got = await raw('tasks/get', { taskId });
      expect(got).toMatchObject({ kind: 'result', result: { taskId, status: 'cancelled', resultType: 'complete' } });
    });

    it('a tool error is completed with result.isError; tasks/result and tasks/list are -32601', async () => {
      const { session, raw } = await modern(kind);
      const execution = await session.callTool('runReport', { body: { steps: 1, fail: true } });
      const { outcome } = await execution.settle();
      const result = resultFromTaskOutcome(outcome) as { content?: unknown; isError?: boolean };
      expect(result.isError).toBe(true);
      const got = await raw('tasks/get', { taskId: execution.handle!.taskId });
      expect(got).toMatchObject({ kind: 'result', result: { status: 'completed', result: { isError: true, resultType: 'complete' } } });
      expect(await raw('tasks/result', { taskId: execution.handle!.taskId })).toMatchObject({ kind: 'error', error: { code: -32601 } });
      expect(await raw('tasks/list', {})).toMatchObject({ kind: 'error', error: { code: -32601 } });
    });

    it('a task: required tool called without the extension is -32021 naming it; tasks/get without it is -32021 too', async () => {
      const { raw } = await modern(kind);
      const refused = await raw('tools/call', { name: 'bake', arguments: {} }, false);
      expect(refused).toMatchObject({
        kind: 'error',
        error: { code: -32021, data: { requiredCapabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } } } },
      });
      expect(await raw('tasks/get', { taskId: 'x' }, false)).toMatchObject({ kind: 'error', error: { code: -32021 } });
      // an optional one runs at once for such a request
      const sync = await raw('tools/call', { name: 'brew', arguments: { ms: 1 } }, false);
      expect(sync).toMatchObject({ kind: 'result', result: { resultType: 'complete' } });
      expect(textOf((sync as { result: { content?: unknown } }).result)).toBe('brewed for 1 ms');
    });

    it('a task whose handler asks for input waits input_required; tasks/update answers it and the call ends, audited once', async () => {
      const { raw } = await modern(kind);
      const caps = { elicitation: {}, extensions: { 'io.modelcontextprotocol/tasks': {} } };
      const meta = {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientInfo': { name: 'e2e-modern', version: '1.0.0' },
        'io.modelcontextprotocol/clientCapabilities': caps,
      };
      const created = (await raw('tools/call', { name: 'ask', arguments: {}, _meta: meta })) as { result: { taskId: string; resultType: string } };
      expect(created.result.resultType).toBe('task');
      const taskId = created.result.taskId;
      let got: { result: { status: string; inputRequests?: Record<string, { method: string }>; result?: { content?: unknown } } };
      const get = async () => {
        await new Promise((r) => setTimeout(r, 50));
        return (await raw('tasks/get', { taskId })) as typeof got;
      };
      do got = await get();
      while (got.result.status === 'working');
      expect(got.result.status).toBe('input_required');
      expect(Object.keys(got.result.inputRequests ?? {})).toEqual(['elicit-1']);
      expect(got.result.inputRequests!['elicit-1']!.method).toBe('elicitation/create');
      expect(await raw('tasks/update', { taskId, inputResponses: { 'elicit-1': { action: 'accept', content: { name: 'Alice' } } } })).toMatchObject({
        kind: 'result',
        result: { resultType: 'complete' },
      });
      do got = await get();
      while (got.result.status === 'working' || got.result.status === 'input_required');
      expect(got.result.status).toBe('completed');
      expect(textOf(got.result.result!)).toBe('hello Alice');
      if (kind === 'http') {
        // one logical call across its two runs: one tool.invoked, one terminal event
        const lines = http
          .stderr()
          .split('\n')
          .filter((l) => l.startsWith('audit ') && l.includes('"primitive":"ask"'));
        expect(lines.filter((l) => l.includes('"event":"tool.invoked"'))).toHaveLength(1);
        expect(lines.filter((l) => l.includes('"event":"tool.completed"'))).toHaveLength(1);
      }
    });

    it('task: deferred asks in an input-required round first, then becomes a task when the handler says so', async () => {
      const { raw } = await modern(kind);
      const meta = {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientInfo': { name: 'e2e-modern', version: '1.0.0' },
        'io.modelcontextprotocol/clientCapabilities': { elicitation: {}, extensions: { 'io.modelcontextprotocol/tasks': {} } },
      };
      const first = (await raw('tools/call', { name: 'interview', arguments: {}, _meta: meta })) as { result: Record<string, unknown> };
      expect(first.result.resultType).toBe('input_required');
      expect(first.result.taskId).toBeUndefined();
      expect(Object.keys(first.result.inputRequests as object)).toEqual(['name']);
      const second = (await raw('tools/call', {
        name: 'interview',
        arguments: {},
        inputResponses: { name: { action: 'accept', content: { name: 'Alice' } } },
        requestState: first.result.requestState,
        _meta: meta,
      })) as { result: Record<string, unknown> };
      expect(second.result.resultType).toBe('task');
      expect(second.result.requestState).toBeUndefined();
      const taskId = second.result.taskId as string;
      let got: { result: { status: string; result?: { content?: unknown } } };
      do {
        await new Promise((r) => setTimeout(r, 50));
        got = (await raw('tasks/get', { taskId })) as typeof got;
      } while (got.result.status === 'working');
      expect(got.result.status).toBe('completed');
      expect(textOf(got.result.result!)).toBe('Hello, Alice!');
    });

    it("subscriptions/listen with taskIds acknowledges the connection's own tasks, then sends notifications/tasks as one changes", async () => {
      const { raw, post, taskNotifications } = await modern(kind);
      const created = (await raw('tools/call', { name: 'brew', arguments: { ms: 600_000 } })) as { result: { taskId: string } };
      const taskId = created.result.taskId;
      const envelope = {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientInfo': { name: 'e2e-modern', version: '1.0.0' },
        'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
      };
      const until = async (n: number) => {
        while (taskNotifications.length < n) await new Promise((r) => setTimeout(r, 20));
      };
      if (kind === 'stdio') {
        await post({
          jsonrpc: '2.0',
          id: 'listen-1',
          method: 'subscriptions/listen',
          params: { notifications: { taskIds: [taskId, 'no-such-task'] }, _meta: envelope },
        });
        await until(1);
        expect(taskNotifications[0]).toMatchObject({ method: 'notifications/subscriptions/acknowledged', params: { notifications: { taskIds: [taskId] } } });
        await raw('tasks/cancel', { taskId });
        await until(2);
        expect(taskNotifications[1]).toMatchObject({
          method: 'notifications/tasks',
          params: { taskId, status: 'cancelled', _meta: { 'io.modelcontextprotocol/subscriptionId': 'listen-1' } },
        });
        await post({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'listen-1', _meta: envelope } });
      } else {
        // over HTTP the stream is the listen request's response (test below); here: the task is cancellable as usual
        await raw('tasks/cancel', { taskId });
      }
    });

    it('an extra task tool is a task; cancelling it aborts its handler', async () => {
      const { session, raw } = await modern(kind);
      const execution = await session.callTool('brew', { ms: 600_000 });
      const taskId = execution.handle!.taskId;
      expect((await raw('tasks/get', { taskId })) as unknown).toMatchObject({ result: { status: 'working' } });
      await raw('tasks/cancel', { taskId });
      expect((await raw('tasks/get', { taskId })) as unknown).toMatchObject({ result: { status: 'cancelled' } });
    });
  });
});

describe('tasks belong to the identity that created them (HTTP)', () => {
  it('another identity cannot see, fetch, list or cancel a task', async () => {
    const alice = await legacy('http', 'alice');
    const bob = await legacy('http', 'bob');
    const created = await alice.request(
      { method: 'tools/call', params: { name: 'brew', arguments: { ms: 600_000 }, task: { ttl: 60_000 } } },
      CreateTaskResultSchema,
    );
    const id = created.task.taskId;
    expect((await rpcError(bob.experimental.tasks.getTask(id))).code).toBe(-32602);
    expect((await rpcError(bob.experimental.tasks.cancelTask(id))).code).toBe(-32602);
    // refused at once, not after the task ends (it never would)
    expect((await rpcError(bob.experimental.tasks.getTaskResult(id, CallToolResultSchema))).code).toBe(-32602);
    expect((await bob.experimental.tasks.listTasks()).tasks.map((t) => t.taskId)).not.toContain(id);
    expect((await alice.experimental.tasks.getTask(id)).status).toBe('working');
    const m = await modern('http', 'bob');
    expect(await m.raw('tasks/get', { taskId: id })).toMatchObject({ kind: 'error', error: { code: -32602 } });
    await alice.experimental.tasks.cancelTask(id);
  });

  it("tasks/list is filtered by the session's concern preferences, as tools/list is", async () => {
    const plain = await legacy('http', 'alice');
    const created = await plain.request(
      { method: 'tools/call', params: { name: 'brew', arguments: { ms: 600_000 }, task: { ttl: 60_000 } } },
      CreateTaskResultSchema,
    );
    const { client } = await connectClient(target('http', 'alice'), 'legacy', {
      capabilities: { tasks: {}, experimental: { concerns: { area: 'jobs' } } } as never,
    });
    open.push(client);
    const jobsOnly = client as LegacyClient;
    expect((await jobsOnly.listTools()).tools.map((t) => t.name)).not.toContain('brew');
    expect((await jobsOnly.experimental.tasks.listTasks()).tasks.map((t) => t.taskId)).not.toContain(created.task.taskId);
    expect((await plain.experimental.tasks.listTasks()).tasks.map((t) => t.taskId)).toContain(created.task.taskId);
    await plain.experimental.tasks.cancelTask(created.task.taskId);
  });

  it('a tool the access rules deny gets no task: the call is refused at once, as without one', async () => {
    const bob = await legacy('http', 'bob');
    expect((await bob.listTools()).tools.map((t) => t.name)).not.toContain('startExport');
    const mark = api.count();
    const asTask = await bob
      .request({ method: 'tools/call', params: { name: 'startExport', arguments: { body: { name: 'x' } }, task: { ttl: 60_000 } } }, CallToolResultSchema)
      .then(
        (r) => ({ result: r as { isError?: boolean; task?: unknown; content?: unknown } }),
        (e: unknown) => ({ error: e as { code: number } }),
      );
    const plain = await bob.callTool({ name: 'startExport', arguments: { body: { name: 'x' } } }).then(
      (r) => ({ result: r as { isError?: boolean; task?: unknown; content?: unknown } }),
      (e: unknown) => ({ error: e as { code: number } }),
    );
    // the same refusal either way, and never a task
    expect('result' in asTask ? { isError: asTask.result.isError, text: textOf(asTask.result) } : { code: asTask.error.code }).toEqual(
      'result' in plain ? { isError: plain.result.isError, text: textOf(plain.result) } : { code: plain.error.code },
    );
    if ('result' in asTask) expect(asTask.result.task).toBeUndefined();
    expect(api.count()).toBe(mark);
    expect((await bob.experimental.tasks.listTasks()).tasks).toEqual([]);
  });
});

describe('2026-07-28 status notifications: subscriptions/listen with taskIds (HTTP)', () => {
  /** Opens a listen stream for `taskIds` as `who`; its messages, in order, as they come. */
  async function listen(who: keyof typeof TOKENS, taskIds: string[]) {
    const controller = new AbortController();
    const envelope = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'e2e-listen', version: '1.0.0' },
      'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
    };
    const res = await fetch(http.url, {
      method: 'POST',
      signal: controller.signal,
      headers: {
        authorization: `Bearer ${TOKENS[who]}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'subscriptions/listen',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: `listen-${who}`, method: 'subscriptions/listen', params: { notifications: { taskIds }, _meta: envelope } }),
    });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const reader = res.body!.getReader();
    let buffer = '';
    const next = async (): Promise<{ method: string; params: Record<string, unknown> }> => {
      for (;;) {
        const end = buffer.indexOf('\n\n');
        if (end >= 0) {
          const event = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = event.split('\n').find((l) => l.startsWith('data: '));
          if (data) return JSON.parse(data.slice(6)) as { method: string; params: Record<string, unknown> };
          continue;
        }
        const { value, done } = await reader.read();
        if (done) throw new Error('the listen stream ended');
        buffer += new TextDecoder().decode(value);
      }
    };
    open.push({ close: async () => controller.abort() });
    return { next, close: () => controller.abort() };
  }

  it("acknowledges the caller's own tasks only, then sends notifications/tasks as one changes", async () => {
    const { raw } = await modern('http', 'alice');
    const created = (await raw('tools/call', { name: 'brew', arguments: { ms: 600_000 } })) as { result: { taskId: string } };
    const taskId = created.result.taskId;
    const stream = await listen('alice', [taskId, 'no-such-task']);
    const ack = await stream.next();
    expect(ack).toMatchObject({
      method: 'notifications/subscriptions/acknowledged',
      params: { notifications: { taskIds: [taskId] }, _meta: { 'io.modelcontextprotocol/subscriptionId': 'listen-alice' } },
    });
    // bob may not listen to alice's task: acknowledged without it
    const spy = await listen('bob', [taskId]);
    expect((await spy.next()).params).toMatchObject({ notifications: { taskIds: [] } });
    await raw('tasks/cancel', { taskId });
    const changed = await stream.next();
    expect(changed).toMatchObject({
      method: 'notifications/tasks',
      params: { taskId, status: 'cancelled', _meta: { 'io.modelcontextprotocol/subscriptionId': 'listen-alice' } },
    });
    expect(changed.params.resultType).toBeUndefined();
    stream.close();
    spy.close();
  });

  it('refuses a listen for more than 100 task ids with a JSON-RPC error, before any stream is opened', async () => {
    const envelope = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'e2e-listen', version: '1.0.0' },
      'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
    };
    const taskIds = Array.from({ length: 101 }, (_, i) => `t${i}`);
    const res = await fetch(http.url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${TOKENS.alice}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'subscriptions/listen',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 'listen-many', method: 'subscriptions/listen', params: { notifications: { taskIds }, _meta: envelope } }),
    });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(await res.json()).toMatchObject({
      jsonrpc: '2.0',
      id: 'listen-many',
      error: { code: -32602, message: expect.stringMatching(/at most 100 task ids \(got 101\)/) },
    });
  });
});

describe('bounds of the task table (<PREFIX>_MAX_TASKS, _TASK_TTL_MS)', () => {
  it('--help lists them; with JOBS_MAX_TASKS=1 a second running task is refused (-32603) until the first ends', async () => {
    const help = await run(process.execPath, [path.join(project, 'dist/server.js'), '--help']);
    expect(help.stdout).toContain('JOBS_MAX_TASKS');
    expect(help.stdout).toContain('JOBS_TASK_TTL_MS');
    const small = await startHttp(project, { ...env(), JOBS_MAX_TASKS: '1', JOBS_TASK_TTL_MS: '5000' });
    try {
      const { client } = await connectClient({ kind: 'http', url: small.url }, 'legacy', { capabilities: { tasks: {} } as never });
      open.push(client);
      const c = client as LegacyClient;
      const first = await c.request(
        { method: 'tools/call', params: { name: 'brew', arguments: { ms: 600_000 }, task: { ttl: 60_000 } } },
        CreateTaskResultSchema,
      );
      // the ttl asked for is capped at the server's
      expect(first.task.ttl).toBe(5000);
      const refused = await rpcError(
        c.request({ method: 'tools/call', params: { name: 'brew', arguments: { ms: 1 }, task: { ttl: 60_000 } } }, CreateTaskResultSchema),
      );
      expect(refused.code).toBe(-32603);
      expect(refused.message).toMatch(/its limit/);
      await c.experimental.tasks.cancelTask(first.task.taskId);
      // a finished task makes room
      const next = await c.request({ method: 'tools/call', params: { name: 'brew', arguments: { ms: 1 }, task: { ttl: 60_000 } } }, CreateTaskResultSchema);
      expect(next.task.status).toBe('working');
    } finally {
      small.kill();
    }
  });
});

// keep the linter quiet about unused types in some transports
export type { AnyClient };
