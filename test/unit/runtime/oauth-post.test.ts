/**
 * postClientForm against a real HTTP server on 127.0.0.1: the client credentials are form-encoded
 * before Basic (RFC 6749 §2.3.1), the body is a form, a redirect is not followed, a silent endpoint
 * ends in a FormPostFailure that says it timed out.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FormPostFailure, postClientForm } from '../../../templates/runtime/operation/oauth-post.js';

let server: Server;
let base = '';
const seen: Array<{ url: string; authorization: string; contentType: string; body: string }> = [];

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (d: Buffer) => void (body += d.toString('utf8')));
    req.on('end', () => {
      seen.push({ url: req.url ?? '', authorization: req.headers.authorization ?? '', contentType: req.headers['content-type'] ?? '', body });
      if (req.url === '/silent') return; // never answers
      if (req.url === '/moved') {
        res.writeHead(307, { location: `${base}/token` }).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"access_token":"t"}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('postClientForm', () => {
  it('sends the form with the credentials form-encoded in Basic, and returns the answer', async () => {
    const answer = await postClientForm(`${base}/token`, {
      clientId: 'my id',
      clientSecret: 's!:p',
      form: new URLSearchParams({ grant_type: 'client_credentials' }),
      timeoutMs: 5000,
    });
    expect(answer).toEqual({ status: 200, ok: true, text: '{"access_token":"t"}' });
    const last = seen.at(-1)!;
    expect(Buffer.from(last.authorization.replace(/^Basic /, ''), 'base64').toString('utf8')).toBe('my+id:s%21%3Ap');
    expect(last.contentType).toBe('application/x-www-form-urlencoded');
    expect(last.body).toBe('grant_type=client_credentials');
  });

  it('does not follow a redirect (the secret goes to this endpoint only)', async () => {
    const before = seen.length;
    await expect(postClientForm(`${base}/moved`, { clientId: 'a', clientSecret: 'b', form: new URLSearchParams(), timeoutMs: 5000 })).rejects.toMatchObject({
      timedOut: false,
    });
    expect(seen.slice(before).map((s) => s.url)).toEqual(['/moved']);
  });

  it('a silent endpoint ends in a FormPostFailure that says it timed out', async () => {
    const failure = await postClientForm(`${base}/silent`, { clientId: 'a', clientSecret: 'b', form: new URLSearchParams(), timeoutMs: 100 }).catch(
      (e: unknown) => e,
    );
    expect(failure).toBeInstanceOf(FormPostFailure);
    expect((failure as FormPostFailure).timedOut).toBe(true);
  });
});
