/**
 * Polling a long-running operation (templates/runtime/operation/tasks-poll.ts), without a network: the status
 * URL resolved against the request URL (never appended to the base URL), Retry-After in seconds or
 * as a date within bounds, the cancel templates matched literally (a hostile path template is text,
 * not a pattern), a status URL on another origin refused before anything is sent, an Azure status
 * read whatever its case, and the DELETE only for a declared status monitor.
 */
import { describe, expect, it } from 'vitest';
import { awaitOperation, matchesTemplate, PollError, pollUrl, retryAfterMs } from '../../../templates/runtime/operation/tasks-poll.js';

const accepted = (headers: Record<string, string>) => new Response(null, { status: 202, headers });

describe('tasks-poll', () => {
  it('resolves the status URL against the request URL and prefers Operation-Location, then Azure-AsyncOperation, then Location', () => {
    expect(pollUrl(accepted({ location: '/api/operations/7' }), 'https://h.example/api/exports')).toBe('https://h.example/api/operations/7');
    expect(pollUrl(accepted({ location: 'operations/7' }), 'https://h.example/api/exports')).toBe('https://h.example/api/operations/7');
    expect(pollUrl(accepted({ location: '/l', 'azure-asyncoperation': '/a', 'operation-location': '/o' }), 'https://h.example/x')).toBe('https://h.example/o');
    expect(pollUrl(accepted({}), 'https://h.example/x')).toBeUndefined();
  });

  it('reads Retry-After as seconds or a date, bounded to 100 ms … 30 s', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterMs(accepted({ 'retry-after': '2' }), 1000, now)).toBe(2000);
    expect(retryAfterMs(accepted({ 'retry-after': '0' }), 1000, now)).toBe(100);
    expect(retryAfterMs(accepted({ 'retry-after': '99999' }), 1000, now)).toBe(30_000);
    expect(retryAfterMs(accepted({ 'retry-after': 'Thu, 01 Jan 2026 00:00:05 GMT' }), 1000, now)).toBe(5000);
    expect(retryAfterMs(accepted({}), 1000, now)).toBe(1000);
  });

  it('matches cancel templates as paths under the base URL, their text taken literally', () => {
    expect(matchesTemplate('https://h.example/api/operations/7', 'https://h.example/api', ['/operations/{id}'])).toBe(true);
    expect(matchesTemplate('https://h.example/api/operations/7/x', 'https://h.example/api', ['/operations/{id}'])).toBe(false);
    expect(matchesTemplate('https://h.example/other/operations/7', 'https://h.example/api', ['/operations/{id}'])).toBe(false);
    // regex syntax in a spec's path is text: `.+` does not match anything
    expect(matchesTemplate('https://h.example/api/opsXYZ/7', 'https://h.example/api', ['/ops.+/{id}'])).toBe(false);
    expect(matchesTemplate('https://h.example/api/ops.+/7', 'https://h.example/api', ['/ops.+/{id}'])).toBe(true);
  });

  it('refuses a status URL on another origin without sending anything', async () => {
    const sent: string[] = [];
    const send = async (method: string, url: string) => {
      sent.push(`${method} ${url}`);
      return new Response('{}');
    };
    const err = await awaitOperation(accepted({ location: 'https://elsewhere.example/op/1', 'retry-after': '0' }), 'https://h.example/api/x', {
      send,
      signal: new AbortController().signal,
      baseUrl: 'https://h.example/api',
      longRunning: {},
      timeoutMs: 1000,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PollError);
    expect(String((err as Error).message)).toContain('another origin');
    expect(sent).toEqual([]);
  });

  it('stops polling at its overall deadline with a PollError, cancelling the operation when the API declares DELETE', async () => {
    const sent: string[] = [];
    const send = async (method: string, url: string) => {
      sent.push(`${method} ${new URL(url).pathname}`);
      return new Response('{"status":"Running"}', { headers: { 'content-type': 'application/json', 'retry-after': '0' } });
    };
    const err = await awaitOperation(accepted({ location: '/api/op/9', 'retry-after': '0' }), 'https://h.example/api/x', {
      send,
      signal: new AbortController().signal,
      baseUrl: 'https://h.example/api',
      longRunning: { cancelPaths: ['/op/{id}'] },
      timeoutMs: 1000,
      deadlineMs: 250,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PollError);
    expect(String((err as Error).message)).toMatch(/did not end within 250 ms of polling \/api\/op\/9/);
    expect(sent.at(-1)).toBe('DELETE /api/op/9');
  });

  it('polls while running (202, or status Running), ends on Succeeded with that body, and on Failed as a failure', async () => {
    const answers = [
      new Response(null, { status: 202, headers: { 'retry-after': '0' } }),
      new Response('{"status":"InProgress"}', { headers: { 'content-type': 'application/json', 'retry-after': '0' } }),
      new Response('{"status":"Succeeded","n":1}', { headers: { 'content-type': 'application/json' } }),
    ];
    const send = async () => answers.shift()!;
    const opts = { send, signal: new AbortController().signal, baseUrl: 'https://h.example/api', longRunning: {}, timeoutMs: 1000 };
    const end = await awaitOperation(accepted({ location: '/api/op/1', 'retry-after': '0' }), 'https://h.example/api/x', opts);
    expect(end.failed).toBeUndefined();
    expect(await end.response.json()).toEqual({ status: 'Succeeded', n: 1 });
    const failed = await awaitOperation(accepted({ location: '/api/op/2', 'retry-after': '0' }), 'https://h.example/api/x', {
      ...opts,
      send: async () => new Response('{"status":"FAILED"}', { headers: { 'content-type': 'application/json' } }),
    });
    expect(failed.failed).toBe('failed');
  });

  it('on cancel sends DELETE to a declared status monitor only', async () => {
    for (const [cancelPaths, expected] of [
      [['/op/{id}'], ['GET', 'DELETE']],
      [[], ['GET']],
      [['/pets/{id}'], ['GET']],
    ] as const) {
      const controller = new AbortController();
      const methods: string[] = [];
      const send = async (method: string) => {
        methods.push(method);
        if (method === 'GET') controller.abort(new Error('cancelled'));
        return new Response(null, { status: 202, headers: { 'retry-after': '0' } });
      };
      await awaitOperation(accepted({ location: '/api/op/1', 'retry-after': '0' }), 'https://h.example/api/x', {
        send,
        signal: controller.signal,
        baseUrl: 'https://h.example/api',
        longRunning: { cancelPaths: [...cancelPaths] },
        timeoutMs: 1000,
      }).catch(() => undefined);
      expect(methods).toEqual(expected);
    }
  });
});
