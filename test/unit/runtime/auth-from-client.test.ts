/**
 * Per-client upstream credentials (`fromClient`): over HTTP a scheme that opts in takes its
 * credential from a header of the MCP request, over stdio from the environment; nothing else of
 * the MCP request is forwarded, and no message shows a value.
 */
import { describe, expect, it } from 'vitest';
import type { SecurityScheme } from '../../../templates/runtime/core/types.js';
import type { ApplyContext } from '../../../templates/runtime/operation/auth.js';
import { Authenticator } from '../../../templates/runtime/operation/auth.js';
import { unmetRequirements } from '../../../templates/runtime/process/credentials.js';

const schemes: SecurityScheme[] = [
  { kind: 'apiKey', name: 'key', in: 'query', paramName: 'api_key', fromClient: 'X-Upstream-Key', env: { apiKey: 'PETS_KEY' } },
  { kind: 'bearer', name: 'tok', fromClient: 'X-Upstream-Token', env: { token: 'PETS_TOKEN' } },
  { kind: 'basic', name: 'basic', fromClient: 'X-Upstream-Basic', env: { username: 'PETS_USER', password: 'PETS_PASSWORD' } },
  { kind: 'bearer', name: 'plain', env: { token: 'PETS_PLAIN' } },
];
const env = { PETS_KEY: 'env-key-0000', PETS_TOKEN: 'env-token-0000', PETS_USER: 'envuser', PETS_PASSWORD: 'envpass', PETS_PLAIN: 'plain-0000' };
const request = { url: 'https://api.example.com/pets', method: 'GET', headers: { accept: 'application/json' } };
const ctx = (headers?: Record<string, string>): ApplyContext => ({ timeoutMs: 1000, fetch, ...(headers ? { clientHeaders: new Headers(headers) } : {}) });
const pick = (auth: Authenticator, names: string[]) => {
  const s = auth.select([names]);
  if (!s.ok) throw new Error(s.message);
  return s.schemes;
};

describe('fromClient schemes', () => {
  const auth = new Authenticator(schemes, env);

  it('over HTTP take the credential from the MCP request header: apiKey as is, bearer without "Bearer ", basic from user:password', async () => {
    const headers = {
      'x-upstream-key': ' client-key-1 ',
      'X-Upstream-Token': 'Bearer client-token-1',
      'X-Upstream-Basic': 'alice:pa:ss',
      Authorization: 'Bearer mcp-token-never-forwarded',
    };
    const applied = await auth.apply(request, pick(auth, ['key', 'tok', 'basic']), ctx(headers));
    expect(applied.request.url).toBe('https://api.example.com/pets?api_key=client-key-1');
    expect(applied.request.headers).toEqual({ accept: 'application/json', Authorization: `Basic ${Buffer.from('alice:pa:ss').toString('base64')}` });
    expect(applied.secrets).toEqual(expect.arrayContaining(['client-key-1', 'client-token-1', 'alice', 'pa:ss']));
    const bearerOnly = await auth.apply(request, pick(auth, ['tok']), ctx(headers));
    expect(bearerOnly.request.headers.Authorization).toBe('Bearer client-token-1');
    expect(JSON.stringify(bearerOnly.request)).not.toContain('mcp-token-never-forwarded');
  });

  it('accept basic credentials as Basic <base64>, and a bearer header without the prefix', async () => {
    const encoded = Buffer.from('bob:secret').toString('base64');
    const basic = await auth.apply(request, pick(auth, ['basic']), ctx({ 'X-Upstream-Basic': `basic ${encoded}` }));
    expect(basic.request.headers.Authorization).toBe(`Basic ${encoded}`);
    const bearer = await auth.apply(request, pick(auth, ['tok']), ctx({ 'X-Upstream-Token': 'raw-token-22' }));
    expect(bearer.request.headers.Authorization).toBe('Bearer raw-token-22');
  });

  it('over stdio (no client headers) use the environment as any scheme does', async () => {
    const applied = await auth.apply(request, pick(auth, ['key', 'tok']), ctx());
    expect(applied.request.url).toBe('https://api.example.com/pets?api_key=env-key-0000');
    expect(applied.request.headers.Authorization).toBe('Bearer env-token-0000');
  });

  it('over HTTP never fall back to the environment: a missing header fails naming it, never a value', async () => {
    await expect(auth.apply(request, [schemes[1]!], ctx({}))).rejects.toThrow(
      /the MCP client must send the X-Upstream-Token header with its requests \(security scheme "tok"\)/,
    );
    await expect(auth.apply(request, [schemes[1]!], ctx({ 'X-Upstream-Token': 'Bearer ' }))).rejects.toThrow(/holds no token/);
    const bad = await auth.apply(request, [schemes[2]!], ctx({ 'X-Upstream-Basic': 'no-colon-value' })).catch((e: Error) => e.message);
    expect(bad).toMatch(/must hold Basic <base64 of user:password> or user:password/);
    expect(bad).not.toContain('no-colon-value');
    await expect(auth.apply(request, [schemes[1]!], ctx({ 'X-Upstream-Token': 'a\u0001b' }))).rejects.toThrow(/the X-Upstream-Token header cannot be sent/);
  });

  it('select asks the MCP client for headers over HTTP and for variables over stdio', () => {
    const empty = new Authenticator(schemes, {});
    expect(empty.select([['tok']], new Headers({ 'X-Upstream-Token': 't-123' }))).toMatchObject({ ok: true });
    expect(empty.select([['tok']])).toEqual({ ok: false, message: 'missing credentials: set PETS_TOKEN (scheme "tok") in the server\'s environment' });
    expect(empty.select([['tok', 'plain'], ['basic']], new Headers())).toEqual({
      ok: false,
      message:
        'missing credentials: the call needs the MCP client to send the X-Upstream-Token header and PETS_PLAIN set in the server\'s environment (schemes "tok" + "plain"), or the MCP client to send the X-Upstream-Basic header (scheme "basic")',
    });
    // a scheme without fromClient ignores the MCP request's headers, even one of the same name
    expect(new Authenticator(schemes, {}).select([['plain']], new Headers({ Authorization: 'Bearer x-1234' }))).toMatchObject({ ok: false });
  });

  it('leave fromClient schemes out of the start-up warning over HTTP only', () => {
    const tools = schemes.map((s) => ({ name: `uses_${s.name}`, security: [[s.name]] }));
    expect(unmetRequirements(tools, schemes, {}).map((u) => u.tools)).toEqual([['uses_key'], ['uses_tok'], ['uses_basic'], ['uses_plain']]);
    expect(unmetRequirements(tools, schemes, {}, { transport: 'http' }).map((u) => u.tools)).toEqual([['uses_plain']]);
  });
});
