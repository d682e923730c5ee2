import { describe, expect, it } from 'vitest';
import type { HttpOperation, OperationTool } from '../../../templates/runtime/core/types.js';
import { fillArguments, missingArgumentVariables, readArgumentEnv } from '../../../templates/runtime/operation/arguments.js';
import { buildRequest } from '../../../templates/runtime/operation/request.js';

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
    const filled = fillArguments(
      op,
      { size: 5, body: { name: 'Tom' } },
      new Map([
        ['ACME_ACCOUNT', 'a'],
        ['ACME_TOKEN', 't'],
      ]),
    );
    expect(filled.ok && [filled.args.size, filled.args.body]).toStrictEqual([5, { name: 'Tom' }]);
  });

  it('refuses, naming every unset variable, and reports them per variable at start-up', () => {
    const filled = fillArguments(op, {}, readArgumentEnv([tool('a', op)], { ACME_TOKEN: '  ' }));
    expect(filled).toStrictEqual({
      ok: false,
      message: 'missing configuration: set ACME_ACCOUNT (hidden argument "account") and ACME_TOKEN (hidden argument "token") in the server\'s environment',
    });
    const other: HttpOperation = { method: 'GET', path: '/x', params: [{ arg: 'token', name: 'token', in: 'query', fixed: { env: 'ACME_TOKEN' } }] };
    expect(missingArgumentVariables([tool('a', op), tool('b', other)], { ACME_ACCOUNT: 'x' })).toStrictEqual([{ variable: 'ACME_TOKEN', tools: ['a', 'b'] }]);
  });
});

describe('hidden fields of an object body (argument rules)', () => {
  const form: HttpOperation = {
    method: 'POST',
    path: '/emoji.add',
    params: [],
    body: {
      arg: 'body',
      contentType: 'application/x-www-form-urlencoded',
      fields: [
        { name: 'token', fixed: { env: 'SLACK_TOKEN' } },
        { name: 'team', fixed: { value: 'T1' } },
      ],
    },
  };

  it('sets each hidden field in the body the model sent (or in a new one), from the environment or a constant', () => {
    const env = readArgumentEnv([tool('emoji_add', form)], { SLACK_TOKEN: 'xoxb-1/2' });
    const args = { body: { name: 'party' } };
    const filled = fillArguments(form, args, env);
    if (!filled.ok) throw new Error(filled.message);
    expect(args).toStrictEqual({ body: { name: 'party' } });
    expect(filled.args).toStrictEqual({ body: { name: 'party', token: 'xoxb-1/2', team: 'T1' } });
    expect(buildRequest(form, filled.args, 'https://slack.example').body).toBe('name=party&token=xoxb-1%2F2&team=T1');
    expect(filled.secrets).toEqual(expect.arrayContaining(['xoxb-1/2', 'xoxb-1%2F2']));
    const none = fillArguments(form, {}, env);
    expect(none.ok && none.args).toStrictEqual({ body: { token: 'xoxb-1/2', team: 'T1' } });
  });

  it('refuses a body that carries a hidden field, like an unknown argument, and names an unset variable', () => {
    const env = readArgumentEnv([tool('emoji_add', form)], { SLACK_TOKEN: 'xoxb-1' });
    expect(fillArguments(form, { body: { name: 'party', token: 'from-the-model' } }, env)).toStrictEqual({
      ok: false,
      invalid: true,
      message: 'unknown argument "token" in "body"',
    });
    expect(fillArguments(form, { body: { name: 'party' } }, new Map())).toStrictEqual({
      ok: false,
      message: 'missing configuration: set SLACK_TOKEN (hidden argument "token" of "body") in the server\'s environment',
    });
    expect(missingArgumentVariables([tool('emoji_add', form)], {})).toStrictEqual([{ variable: 'SLACK_TOKEN', tools: ['emoji_add'] }]);
  });
});
