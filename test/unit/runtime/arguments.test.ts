import { describe, expect, it } from 'vitest';
import { fillArguments, missingArgumentVariables, readArgumentEnv } from '../../../templates/runtime/arguments.js';
import { buildRequest } from '../../../templates/runtime/request.js';
import type { HttpOperation, OperationTool } from '../../../templates/runtime/types.js';

const op: HttpOperation = {
  method: 'POST',
  path: '/accounts/{account}/pets',
  params: [
    { arg: 'account', name: 'account', in: 'path', fixed: { env: 'ACME_ACCOUNT' } },
    { arg: 'token', name: 'token', in: 'query', fixed: { env: 'ACME_TOKEN' } },
    { arg: 'version', name: 'X-Version', in: 'header', fixed: { value: '2024-01' } },
    { arg: '__proto__', name: 'p', in: 'query', fixed: { value: 'own' } },
    { arg: 'size', name: 'limit', in: 'query', default: 25 },
  ],
  body: { arg: 'body', contentType: 'application/json', default: { name: 'Rex' } },
};
const tool = (name: string, http: HttpOperation): OperationTool => ({ kind: 'operation', name, inputSchema: { type: 'object' }, http });

describe('hidden arguments and defaults', () => {
  it('fills hidden arguments and defaults under their argument names, for the request to use the wire names', () => {
    const env = readArgumentEnv([tool('a', op)], { ACME_ACCOUNT: ' acc/1 ', ACME_TOKEN: 'tok en&=1', OTHER: 'x' });
    expect([...env]).toStrictEqual([
      ['ACME_ACCOUNT', 'acc/1'],
      ['ACME_TOKEN', 'tok en&=1'],
    ]);
    const args = { size: undefined };
    const filled = fillArguments(op, args, env);
    if (!filled.ok) throw new Error(filled.message);
    expect(args).toStrictEqual({ size: undefined });
    expect(Object.hasOwn(filled.args, '__proto__')).toBe(true);
    const req = buildRequest(op, filled.args, 'https://api.example.com');
    expect(req.url).toBe('https://api.example.com/accounts/acc%2F1/pets?token=tok%20en%26%3D1&p=own&limit=25');
    expect(req.headers['X-Version']).toBe('2024-01');
    expect(req.body).toBe('{"name":"Rex"}');
    // every form the values take on the wire is a secret to scrub
    expect(filled.secrets).toEqual(expect.arrayContaining(['acc/1', 'acc%2F1', 'tok en&=1', 'tok%20en%26%3D1', 'tok+en%26%3D1']));
    expect(filled.secrets).not.toContain('2024-01');
  });

  it('keeps what the model sent over a default', () => {
    const filled = fillArguments(op, { size: 5, body: { name: 'Tom' } }, new Map([['ACME_ACCOUNT', 'a'], ['ACME_TOKEN', 't']]));
    expect(filled.ok && [filled.args.size, filled.args.body]).toStrictEqual([5, { name: 'Tom' }]);
  });

  it('refuses, naming every unset variable, and reports them per variable at start-up', () => {
    const filled = fillArguments(op, {}, readArgumentEnv([tool('a', op)], { ACME_TOKEN: '  ' }));
    expect(filled).toStrictEqual({ ok: false, message: 'missing configuration: set ACME_ACCOUNT (hidden argument "account") and ACME_TOKEN (hidden argument "token") in the server\'s environment' });
    const other: HttpOperation = { method: 'GET', path: '/x', params: [{ arg: 'token', name: 'token', in: 'query', fixed: { env: 'ACME_TOKEN' } }] };
    expect(missingArgumentVariables([tool('a', op), tool('b', other)], { ACME_ACCOUNT: 'x' })).toStrictEqual([{ variable: 'ACME_TOKEN', tools: ['a', 'b'] }]);
  });
});
