/**
 * Test helpers for MCP tasks (test/e2e/tasks.test.ts): a local API on 127.0.0.1 with long-running
 * operations (202 + a status URL, then 200), and the raw request path the 2026-07-28 Tasks client
 * (`@modelcontextprotocol/ext-tasks`) needs beside the v2 SDK `Client`, whose codecs refuse task
 * wire shapes: requests written to the client's own transport (stdio or Streamable HTTP), their
 * answers taken off it before the SDK sees them.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One operation of the local API. */
export type Operation = {
  id: string;
  seq: number;
  kind: 'export' | 'report';
  steps: number;
  polls: number;
  cancelled: boolean;
  fail: boolean;
  keyless: number;
};

/** The local API: its base URL, operations, and events to wait for. */
export type JobsApi = {
  readonly base: string;
  readonly ops: Map<string, Operation>;
  /** Resolves once operation `id` has been polled `n` times. */
  polled(id: string, n: number): Promise<void>;
  /** How many operations were created so far (a mark for {@link JobsApi.operationAfter}). */
  count(): number;
  /** Resolves once an operation after `mark` is created; its id. */
  operationAfter(mark: number): Promise<string>;
  /** Resolves once operation `id` got its cancelling DELETE. */
  deleted(id: string): Promise<void>;
  close(): Promise<void>;
};

/**
 * Starts the API: `POST /api/exports` answers 202 + `Location: /api/operations/<id>` (an absolute
 * path: appended to the base URL it would be /api/api/…) and the operation answers 202 for `steps`
 * polls (-1: until cancelled), then 200 with its result; `DELETE /api/operations/<id>` cancels it.
 * `POST /api/reports` answers 202 + `Azure-AsyncOperation` (on `localhost` instead of 127.0.0.1
 * with `elsewhere`), polled as 200 `{status: "Running"}` then `Succeeded` (or `Failed`). Every
 * request must carry `X-Api-Key: <key>`.
 */
export async function startJobsApi(key: string): Promise<JobsApi> {
  const ops = new Map<string, Operation>();
  const waiters: Array<() => void> = [];
  const wake = (): void => {
    for (const w of waiters.splice(0)) w();
  };
  const until = async (test: () => boolean): Promise<void> => {
    while (!test()) await new Promise<void>((resolve) => waiters.push(resolve));
  };
  let count = 0;
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => void (body += d.toString('utf8')));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const json = (status: number, value: unknown, headers: Record<string, string> = {}) => {
        res.writeHead(status, { 'content-type': 'application/json', ...headers });
        res.end(JSON.stringify(value));
      };
      const op = (prefix: string) => (url.pathname.startsWith(prefix) ? ops.get(url.pathname.slice(prefix.length)) : undefined);
      if (req.headers['x-api-key'] !== key) {
        const o = op('/api/operations/') ?? op('/api/reports/status/');
        if (o) o.keyless++;
        wake();
        return json(401, { error: 'no key' });
      }
      const input = body ? (JSON.parse(body) as { steps?: number; elsewhere?: boolean; fail?: boolean }) : {};
      if (req.method === 'POST' && (url.pathname === '/api/exports' || url.pathname === '/api/reports')) {
        const kind = url.pathname === '/api/exports' ? 'export' : 'report';
        const id = `${kind}-${++count}`;
        ops.set(id, { id, seq: count, kind, steps: input.steps ?? 1, polls: 0, cancelled: false, fail: input.fail === true, keyless: 0 });
        wake();
        const port = (server.address() as AddressInfo).port;
        if (kind === 'export') return json(202, { accepted: id }, { location: `/api/operations/${id}`, 'retry-after': '0' });
        const host = input.elsewhere ? `http://localhost:${port}` : '';
        return json(202, {}, { 'azure-asyncoperation': `${host}/api/reports/status/${id}`, 'retry-after': '0' });
      }
      const exp = op('/api/operations/');
      if (exp && req.method === 'DELETE') {
        exp.cancelled = true;
        wake();
        res.writeHead(204).end();
        return;
      }
      if (exp && req.method === 'GET') {
        exp.polls++;
        wake();
        if (exp.cancelled) return json(200, { id: exp.id, status: 'Canceled' });
        if (exp.steps < 0 || exp.polls <= exp.steps) return json(202, { id: exp.id, status: 'Running' }, { 'retry-after': '0' });
        return json(200, { id: exp.id, status: 'Succeeded', rows: 42 });
      }
      const rep = op('/api/reports/status/');
      if (rep && req.method === 'GET') {
        rep.polls++;
        wake();
        if (rep.steps < 0 || rep.polls <= rep.steps) return json(200, { status: 'Running' }, { 'retry-after': '0' });
        return rep.fail ? json(200, { status: 'Failed', error: { message: 'disk full' } }) : json(200, { status: 'Succeeded', total: 7 });
      }
      if (req.method === 'GET' && url.pathname === '/api/pets') return json(200, []);
      json(404, { error: 'not found' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    base: `http://127.0.0.1:${port}/api`,
    ops,
    polled: (id, n) => until(() => (ops.get(id)?.polls ?? 0) >= n),
    count: () => count,
    operationAfter: async (mark) => {
      await until(() => count > mark);
      return [...ops.values()].find((o) => o.seq === mark + 1)!.id;
    },
    deleted: (id) => until(() => ops.get(id)?.cancelled === true),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A JSON-RPC message on a client transport. */
type Message = { id?: unknown; result?: unknown; error?: { code: number; message: string; data?: unknown } };
/** The client transport, as far as raw requests go. */
type RawTransport = { send(message: unknown): Promise<void>; onmessage?: (message: Message, extra?: unknown) => void };

/**
 * The `rawDispatch` of ext-tasks for a connected v2 `Client` over `transport`: each request gets an
 * id of its own and goes out on the transport; its answer is taken off before the SDK sees it.
 */
export function rawDispatch(transport: RawTransport): ((request: unknown) => Promise<{ kind: 'result'; result: never } | { kind: 'error'; error: never }>) & {
  taskNotifications: Array<{ method: string; params: Record<string, unknown> }>;
} {
  const pending = new Map<string, (m: Message) => void>();
  const sdk = transport.onmessage;
  /** Task listen notifications (2026-07-28), kept here: the SDK client knows neither. */
  const taskNotifications: Array<{ method: string; params: Record<string, unknown> }> = [];
  transport.onmessage = (message, extra) => {
    const method = (message as { method?: unknown }).method;
    if (message.id === undefined && (method === 'notifications/subscriptions/acknowledged' || method === 'notifications/tasks')) {
      taskNotifications.push(message as unknown as { method: string; params: Record<string, unknown> });
      return;
    }
    const done = typeof message.id === 'string' ? pending.get(message.id) : undefined;
    if (done) {
      pending.delete(message.id as string);
      done(message);
    } else sdk?.call(transport, message, extra);
  };
  let next = 0;
  const dispatch = async (request: unknown) => {
    const id = `raw-${++next}`;
    const answer = new Promise<Message>((resolve) => pending.set(id, resolve));
    try {
      await transport.send({ ...(request as object), jsonrpc: '2.0', id });
    } catch (err) {
      // over HTTP a JSON-RPC error with an HTTP error status comes back as the transport's error, its body in the message
      const body = /\{.*\}$/s.exec(err instanceof Error ? err.message : '')?.[0];
      const parsed = body ? (JSON.parse(body) as Message) : undefined;
      if (!parsed || parsed.id !== id) throw err;
      pending.delete(id);
      return { kind: 'error', error: parsed.error as never };
    }
    const m = await answer;
    return m.error ? ({ kind: 'error', error: m.error as never } as const) : ({ kind: 'result', result: m.result as never } as const);
  };
  return Object.assign(dispatch, { taskNotifications });
}
