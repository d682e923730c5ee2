/**
 * The start-up credentials check: security requirement alternatives are "one of", the schemes of
 * one alternative are all needed, an empty alternative makes credentials optional, and over HTTP
 * `fromClient` schemes are never missing. The warning names what to set and which tools fail.
 */
import { describe, expect, it } from 'vitest';
import type { SecurityScheme } from '../../../templates/runtime/core/types.js';
import { Authenticator } from '../../../templates/runtime/operation/auth.js';
import { describeUnmet, unmetRequirements } from '../../../templates/runtime/process/credentials.js';

const schemes: SecurityScheme[] = [
  { kind: 'bearer', name: 'personalAccessToken', env: { token: 'A_PAT' } },
  { kind: 'bearer', name: 'oauth2', env: { token: 'A_OAUTH' } },
  { kind: 'apiKey', name: 'key', in: 'header', paramName: 'X-Key', env: { apiKey: 'A_KEY' } },
  { kind: 'basic', name: 'basic', env: { username: 'A_USER', password: 'A_PASS' } },
  { kind: 'apiKey', name: 'client', in: 'header', paramName: 'X-Client', fromClient: 'X-Client', env: { apiKey: 'A_CLIENT' } },
];
const either = [['personalAccessToken'], ['oauth2']];
const tools = [
  { name: 'getTask', security: either },
  { name: 'getUser', security: either },
  { name: 'both', security: [['key', 'basic']] },
  { name: 'optional', security: [[], ['key']] },
  { name: 'open', security: [] },
  { name: 'unset' },
];

describe('unmetRequirements', () => {
  it('is satisfied by any one alternative: with only the second set, nothing is missing', () => {
    const env = { A_OAUTH: 'o-1', A_KEY: 'k', A_USER: 'u', A_PASS: 'p' };
    expect(unmetRequirements(tools, schemes, env)).toEqual([]);
    expect(unmetRequirements(tools, schemes, { ...env, A_OAUTH: undefined, A_PAT: 't' })).toEqual([]);
    // what start-up accepts, a call accepts too
    expect(new Authenticator(schemes, env).select(either)).toMatchObject({ ok: true, schemes: [{ name: 'oauth2' }] });
  });

  it('reports a group of tools only when none of its alternatives is complete, naming every alternative', () => {
    const unmet = unmetRequirements(tools, schemes, { A_PAT: '  ', A_KEY: 'k', A_USER: 'u' });
    expect(unmet).toEqual([
      {
        tools: ['getTask', 'getUser'],
        alternatives: [
          { schemes: ['personalAccessToken'], variables: ['A_PAT'] },
          { schemes: ['oauth2'], variables: ['A_OAUTH'] },
        ],
      },
      { tools: ['both'], alternatives: [{ schemes: ['key', 'basic'], variables: ['A_PASS'] }] },
    ]);
    expect(unmet.map(describeUnmet)).toEqual([
      'credentials are not set: set one of A_PAT (scheme "personalAccessToken"), or A_OAUTH (scheme "oauth2"); 2 tools getTask and getUser will fail until one of them is',
      'credentials are not set: set A_PASS (schemes "key" + "basic"); tool both will fail until it is',
    ]);
  });

  it('counts a scheme the server does not configure as unusable, and shortens long tool lists', () => {
    const many = Array.from({ length: 5 }, (_, i) => ({ name: `t${i}`, security: [['nope'], ['basic']] }));
    const [u] = unmetRequirements(many, schemes, {});
    expect(describeUnmet(u!)).toBe(
      'credentials are not set: set one of scheme "nope" (not configured in this server), or A_USER and A_PASS (scheme "basic"); 5 tools t0, t1, t2 and 2 more will fail until one of them is',
    );
  });

  it('over HTTP takes fromClient schemes as given by each request', () => {
    const t = [{ name: 'c', security: [['client']] }];
    expect(unmetRequirements(t, schemes, {})).toHaveLength(1);
    expect(unmetRequirements(t, schemes, {}, { transport: 'http' })).toEqual([]);
  });
});
