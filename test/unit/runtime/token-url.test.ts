/** The generated server never sends an OAuth client secret over plain http to another machine. */
import { describe, expect, it } from 'vitest';
import { AuthError, TokenCache } from '../../../templates/runtime/operation/oauth.js';

const request = (tokenUrl: string, baseUrl?: string) => {
  const calls: string[] = [];
  const fetch = (async (url: string) => {
    calls.push(url);
    return new Response('{"access_token":"tok-123456","expires_in":60}', { status: 200, headers: { 'content-type': 'application/json' } });
  }) as unknown as typeof globalThis.fetch;
  const req = { tokenUrl, scopes: [], clientId: 'id', clientSecret: 'secret-value', timeoutMs: 1000, fetch, ...(baseUrl ? { baseUrl } : {}) };
  return { calls, token: () => new TokenCache().token('cc', req) };
};

describe('token URLs', () => {
  it.each([['http://auth.example.com/token'], ['/oauth/token', 'http://api.example.com/v1']])(
    'refuses %s (base %s) without sending anything',
    async (tokenUrl, baseUrl?: string) => {
      const r = request(tokenUrl, baseUrl);
      const err = await r.token().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(AuthError);
      expect((err as Error).message).toMatch(/is not https, and the client secret must not cross the network in clear/);
      expect(r.calls).toEqual([]);
    },
  );

  it.each(['http://127.0.0.1:9/token', 'http://localhost/token', 'http://[::1]/token', 'https://auth.example.com/token'])('accepts %s', async (tokenUrl) => {
    const r = request(tokenUrl);
    expect(await r.token()).toBe('tok-123456');
    expect(r.calls).toHaveLength(1);
  });
});
