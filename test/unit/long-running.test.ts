/**
 * Long-running operations (src/ir/tools/long-running.ts): a 202 with a status-URL header or the AutoRest
 * mark makes an operation long-running; only a DELETE on a status monitor (a path whose GET answers
 * 202) is a cancellation — never any other DELETE.
 */
import { describe, expect, it } from 'vitest';
import { longRunning } from '../../src/ir/tools/long-running.js';
import { listOperations } from '../../src/openapi/operations.js';

const doc = {
  openapi: '3.0.3',
  info: { title: 't', version: '1' },
  paths: {
    '/exports': {
      post: { operationId: 'startExport', responses: { '202': { description: 'a', headers: { 'Operation-Location': { schema: { type: 'string' } } } } } },
    },
    '/jobs': { post: { operationId: 'startJob', responses: { '202': { $ref: '#/components/responses/Accepted' } } } },
    '/reports': { post: { operationId: 'runReport', 'x-ms-long-running-operation': true, responses: { '200': { description: 'ok' } } } },
    '/later': { post: { operationId: 'later', responses: { '202': { description: 'accepted, no status URL' } } } },
    '/pets/{id}': { get: { responses: { '200': { description: 'ok' } } }, delete: { responses: { '204': { description: 'gone' } } } },
    '/operations/{id}': {
      get: { responses: { '200': { description: 'done' }, '202': { description: 'running' } } },
      delete: { responses: { '204': { description: 'cancelled' } } },
    },
  },
  components: { responses: { Accepted: { description: 'a', headers: { Location: { schema: { type: 'string' } } } } } },
};
const refs = (node: unknown): unknown => {
  const ref = (node as { $ref?: string } | undefined)?.$ref;
  return ref ? (doc.components.responses as Record<string, unknown>)[ref.split('/').pop()!] : node;
};

describe('long-running operations', () => {
  const ops = listOperations(doc);
  const of = (id: string) => longRunning(ops.find((o) => o.operationId === id)!, ops, refs);

  it('detects a 202 with Location / Operation-Location (through a $ref) and the AutoRest mark', () => {
    expect(of('startExport')).toEqual({ cancelPaths: ['/operations/{id}'] });
    expect(of('startJob')).toEqual({ cancelPaths: ['/operations/{id}'] });
    expect(of('runReport')).toEqual({ cancelPaths: ['/operations/{id}'] });
    expect(of('later')).toBeUndefined();
  });

  it('takes only status monitors as cancellations: DELETE /pets/{id} is never one', () => {
    expect(of('startExport')?.cancelPaths).not.toContain('/pets/{id}');
  });
});
