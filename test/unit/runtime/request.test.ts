import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HttpOperation, HttpParam } from '../../../templates/runtime/core/types.js';
import { buildRequest, DEFAULT_ACCEPT, encodeRfc3986, isDotSegment, joinUrl, RequestBuildError } from '../../../templates/runtime/operation/request.js';

const BASE = 'http://api.test/v1';

function op(path: string, params: HttpParam[], extra: Partial<HttpOperation> = {}): HttpOperation {
  return { method: 'GET', path, params, ...extra };
}

/** URL of a request with one query parameter `p` (wire name `id`). */
function query(param: Omit<HttpParam, 'arg' | 'name' | 'in'>, value: unknown): string {
  const url = buildRequest(op('/q', [{ arg: 'p', name: 'id', in: 'query', ...param }]), { p: value }, BASE).url;
  return url.slice(`${BASE}/q`.length);
}

/** Path of a request with one path parameter `p` (wire name `id`) in `/x/{id}`. */
function path(param: Omit<HttpParam, 'arg' | 'name' | 'in'>, value: unknown): string {
  const url = buildRequest(op('/x/{id}', [{ arg: 'p', name: 'id', in: 'path', ...param }]), { p: value }, BASE).url;
  return url.slice(`${BASE}/x/`.length);
}

function buildError(fn: () => unknown): RequestBuildError {
  try {
    fn();
  } catch (err) {
    if (err instanceof RequestBuildError) return err;
    throw err;
  }
  throw new Error('expected a RequestBuildError');
}

describe('encoding helpers', () => {
  it('percent-encodes everything outside the RFC 3986 unreserved set', () => {
    expect(encodeRfc3986("a b/c?d#e&f=g+h!'()*~._-")).toBe('a%20b%2Fc%3Fd%23e%26f%3Dg%2Bh%21%27%28%29%2A~._-');
    expect(encodeRfc3986('ü🐶')).toBe('%C3%BC%F0%9F%90%B6');
  });

  it('joins base URL and path keeping the base path', () => {
    expect(joinUrl('http://h/api/v3', '/pets')).toBe('http://h/api/v3/pets');
    expect(joinUrl('http://h/api/v3/', '/pets')).toBe('http://h/api/v3/pets');
    expect(joinUrl('http://h', 'pets')).toBe('http://h/pets');
  });

  it('recognises dot segments including percent-encoded ones', () => {
    for (const s of ['.', '..', '%2e', '%2E%2e', '.%2E', '%2e.']) expect(isDotSegment(s)).toBe(true);
    for (const s of ['...', 'a..', '%252e%252e', '', '.a']) expect(isDotSegment(s)).toBe(false);
  });
});

describe('path parameters', () => {
  it('simple style (default)', () => {
    expect(path({}, 5)).toBe('5');
    expect(path({}, [3, 4, 5])).toBe('3,4,5');
    expect(path({}, { role: 'admin', firstName: 'Alex' })).toBe('role,admin,firstName,Alex');
    expect(path({ explode: true }, { role: 'admin', firstName: 'Alex' })).toBe('role=admin,firstName=Alex');
    expect(path({}, true)).toBe('true');
  });

  it('label style', () => {
    expect(path({ style: 'label' }, 5)).toBe('.5');
    expect(path({ style: 'label' }, [3, 4, 5])).toBe('.3,4,5');
    expect(path({ style: 'label', explode: true }, [3, 4, 5])).toBe('.3.4.5');
    expect(path({ style: 'label' }, { role: 'admin', firstName: 'Alex' })).toBe('.role,admin,firstName,Alex');
    expect(path({ style: 'label', explode: true }, { role: 'admin', firstName: 'Alex' })).toBe('.role=admin.firstName=Alex');
  });

  it('matrix style', () => {
    expect(path({ style: 'matrix' }, 5)).toBe(';id=5');
    expect(path({ style: 'matrix' }, [3, 4, 5])).toBe(';id=3,4,5');
    expect(path({ style: 'matrix', explode: true }, [3, 4, 5])).toBe(';id=3;id=4;id=5');
    expect(path({ style: 'matrix' }, { role: 'admin', firstName: 'Alex' })).toBe(';id=role,admin,firstName,Alex');
    expect(path({ style: 'matrix', explode: true }, { role: 'admin', firstName: 'Alex' })).toBe(';role=admin;firstName=Alex');
  });

  it('keeps hostile values inside their segment', () => {
    expect(path({}, '../admin')).toBe('..%2Fadmin');
    expect(path({}, 'a/b?c')).toBe('a%2Fb%3Fc');
    expect(path({}, 'x#frag')).toBe('x%23frag');
    expect(path({}, '%2e%2e')).toBe('%252e%252e');
    expect(path({}, 'a b')).toBe('a%20b');
    expect(path({}, ['a,b', 'c/d'])).toBe('a%2Cb,c%2Fd');
  });

  it('refuses values that form a dot segment or an empty segment, naming the argument', () => {
    for (const value of ['..', '.']) {
      const err = buildError(() => path({}, value));
      expect(err.arg).toBe('p');
      expect(err.message).toContain('p');
    }
    // label style: "." becomes ".." after the prefix
    expect(buildError(() => path({ style: 'label' }, '.')).arg).toBe('p');
    expect(buildError(() => path({}, '')).message).toMatch(/must not be empty/);
    expect(buildError(() => path({}, undefined)).message).toMatch(/Missing value/);
    // two parameters in one segment that together make ".."
    const two = op('/x/{a}{b}', [
      { arg: 'first', name: 'a', in: 'path' },
      { arg: 'second', name: 'b', in: 'path' },
    ]);
    expect(buildError(() => buildRequest(two, { first: '.', second: '.' }, BASE)).arg).toBe('first');
    expect(buildRequest(two, { first: '.', second: 'x' }, BASE).url).toBe(`${BASE}/x/.x`);
  });

  it('fills several parameters and keeps literal parts of the template', () => {
    const o = op('/owners/{ownerId}/pets/{petId}.json', [
      { arg: 'ownerId', name: 'ownerId', in: 'path' },
      { arg: 'pet_id', name: 'petId', in: 'path' },
    ]);
    expect(buildRequest(o, { ownerId: 'o 1', pet_id: 7 }, BASE).url).toBe(`${BASE}/owners/o%201/pets/7.json`);
  });

  it('reports a placeholder no parameter provides', () => {
    expect(buildError(() => buildRequest(op('/x/{nope}', []), {}, BASE)).message).toMatch(/\{nope\}/);
  });
});

describe('query parameters', () => {
  it('form style, explode true (default)', () => {
    expect(query({}, 5)).toBe('?id=5');
    expect(query({}, [1, 2])).toBe('?id=1&id=2');
    expect(query({}, { role: 'admin', firstName: 'Alex' })).toBe('?role=admin&firstName=Alex');
  });

  it('form style, explode false', () => {
    expect(query({ explode: false }, [1, 2])).toBe('?id=1,2');
    expect(query({ explode: false }, { role: 'admin', firstName: 'Alex' })).toBe('?id=role,admin,firstName,Alex');
  });

  it('spaceDelimited and pipeDelimited', () => {
    expect(query({ style: 'spaceDelimited', explode: false }, [1, 2, 3])).toBe('?id=1%202%203');
    expect(query({ style: 'pipeDelimited', explode: false }, [1, 2, 3])).toBe('?id=1|2|3');
    expect(query({ style: 'pipeDelimited', explode: false }, ['a|b', 'c'])).toBe('?id=a%7Cb|c');
    // explode true behaves like form
    expect(query({ style: 'pipeDelimited', explode: true }, [1, 2])).toBe('?id=1&id=2');
  });

  it('deepObject', () => {
    expect(query({ style: 'deepObject', explode: true }, { color: 'red', size: 'L' })).toBe('?id[color]=red&id[size]=L');
    expect(query({ style: 'deepObject', explode: true }, { a: { b: 'x y' } })).toBe('?id[a][b]=x%20y');
    expect(query({ style: 'deepObject', explode: true }, { 'k&=': 'v' })).toBe('?id[k%26%3D]=v');
  });

  it('encodes spaces as %20 (never +) and escapes separators in values', () => {
    expect(query({}, 'a b+c&d=e')).toBe('?id=a%20b%2Bc%26d%3De');
    expect(query({ explode: false }, ['a,b', 'c'])).toBe('?id=a%2Cb,c');
  });

  it('omits undefined arguments and never invents values', () => {
    const o = op('/q', [
      { arg: 'a', name: 'a', in: 'query' },
      { arg: 'b', name: 'b', in: 'query' },
      { arg: 'c', name: 'c', in: 'query' },
    ]);
    expect(buildRequest(o, { b: false }, BASE).url).toBe(`${BASE}/q?b=false`);
    expect(buildRequest(o, {}, BASE).url).toBe(`${BASE}/q`);
    expect(buildRequest(o, { a: [] }, BASE).url).toBe(`${BASE}/q`);
    expect(buildRequest(o, { a: 0, c: '' }, BASE).url).toBe(`${BASE}/q?a=0&c=`);
  });

  it('appends to a template that already has a query', () => {
    const o = op('/search?kind=pet', [{ arg: 'q', name: 'q', in: 'query' }]);
    expect(buildRequest(o, { q: 'x' }, BASE).url).toBe(`${BASE}/search?kind=pet&q=x`);
  });
});

describe('headers and cookies', () => {
  it('sends header parameters (arrays joined with commas) and a default Accept', () => {
    const o = op('/h', [
      { arg: 'reqId', name: 'X-Request-Id', in: 'header' },
      { arg: 'tags', name: 'X-Tags', in: 'header' },
      { arg: 'obj', name: 'X-Obj', in: 'header', explode: true },
      { arg: 'unset', name: 'X-Unset', in: 'header' },
    ]);
    const req = buildRequest(o, { reqId: 42, tags: ['a', 'b'], obj: { k: 'v', n: 1 } }, BASE);
    expect(req.headers).toEqual({ 'X-Request-Id': '42', 'X-Tags': 'a,b', 'X-Obj': 'k=v,n=1', Accept: DEFAULT_ACCEPT });
  });

  it('lets a header parameter set Accept', () => {
    const req = buildRequest(op('/h', [{ arg: 'acc', name: 'accept', in: 'header' }]), { acc: 'text/csv' }, BASE);
    expect(req.headers).toEqual({ accept: 'text/csv' });
  });

  it('refuses header values that would inject lines or are not byte strings', () => {
    const o = op('/h', [{ arg: 'h', name: 'X-H', in: 'header' }]);
    expect(buildError(() => buildRequest(o, { h: 'a\r\nX-Evil: 1' }, BASE)).arg).toBe('h');
    expect(buildError(() => buildRequest(o, { h: 'snow ☃' }, BASE)).arg).toBe('h');
  });

  it('sends cookie parameters as one Cookie header with encoded values', () => {
    const o = op('/c', [
      { arg: 'a', name: 'a', in: 'cookie' },
      { arg: 'b', name: 'b', in: 'cookie' },
      { arg: 'list', name: 'list', in: 'cookie', explode: false },
    ]);
    expect(buildRequest(o, { a: 1, b: 2 }, BASE).headers.Cookie).toBe('a=1; b=2');
    expect(buildRequest(o, { a: 'x; admin=1', list: [1, 2] }, BASE).headers.Cookie).toBe('a=x%3B%20admin%3D1; list=1,2');
    expect(buildRequest(o, {}, BASE).headers.Cookie).toBeUndefined();
  });
});

describe('bodies', () => {
  const withBody = (contentType: string) => op('/b', [], { method: 'POST', body: { arg: 'body', contentType } });

  it('JSON and +json', () => {
    const req = buildRequest(withBody('application/json'), { body: { name: 'Rex', tags: ['a'] } }, BASE);
    expect(req.body).toBe('{"name":"Rex","tags":["a"]}');
    expect(req.headers['Content-Type']).toBe('application/json');
    expect(req.method).toBe('POST');
    const patch = buildRequest(withBody('application/merge-patch+json'), { body: 'str' }, BASE);
    expect(patch.body).toBe('"str"');
    expect(patch.headers['Content-Type']).toBe('application/merge-patch+json');
  });

  it('form-urlencoded: arrays repeat, nested objects become JSON', () => {
    const req = buildRequest(withBody('application/x-www-form-urlencoded'), { body: { name: 'a b', ids: [1, 2], meta: { k: 'v' }, skip: undefined } }, BASE);
    expect(req.body).toBe('name=a+b&ids=1&ids=2&meta=%7B%22k%22%3A%22v%22%7D');
    expect(new URLSearchParams(req.body as string).getAll('ids')).toEqual(['1', '2']);
  });

  it('text/plain sends the string', () => {
    expect(buildRequest(withBody('text/plain'), { body: 'hello\nworld' }, BASE).body).toBe('hello\nworld');
    expect(buildRequest(withBody('text/plain'), { body: 12 }, BASE).body).toBe('12');
  });

  it('octet-stream decodes base64 into bytes and refuses non-base64', () => {
    const req = buildRequest(withBody('application/octet-stream'), { body: Buffer.from([0, 1, 2, 255]).toString('base64') }, BASE);
    expect(req.body).toBeInstanceOf(Uint8Array);
    expect([...(req.body as Uint8Array)]).toEqual([0, 1, 2, 255]);
    expect(buildError(() => buildRequest(withBody('application/octet-stream'), { body: 'not base64!' }, BASE)).arg).toBe('body');
    expect(buildError(() => buildRequest(withBody('application/octet-stream'), { body: 42 }, BASE)).arg).toBe('body');
  });

  it('multipart/form-data gets one part per field and a boundary', () => {
    const req = buildRequest(withBody('multipart/form-data'), { body: { name: 'Rex', meta: { a: 1 } } }, BASE);
    const ct = req.headers['Content-Type']!;
    const boundary = /boundary=(\S+)/.exec(ct)?.[1];
    expect(ct.startsWith('multipart/form-data; boundary=')).toBe(true);
    expect(req.body).toBe(
      `--${boundary}\r\nContent-Disposition: form-data; name="name"\r\n\r\nRex\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="meta"\r\nContent-Type: application/json\r\n\r\n{"a":1}\r\n` +
        `--${boundary}--\r\n`,
    );
  });

  it('other media types: JSON for objects, text otherwise', () => {
    expect(buildRequest(withBody('application/vnd.custom'), { body: { a: 1 } }, BASE).body).toBe('{"a":1}');
    expect(buildRequest(withBody('application/xml'), { body: '<a/>' }, BASE).body).toBe('<a/>');
  });

  it('sends no body and no Content-Type when the body argument is absent', () => {
    const req = buildRequest(withBody('application/json'), {}, BASE);
    expect(req.body).toBeUndefined();
    expect(req.headers['Content-Type']).toBeUndefined();
  });
});

describe('on the wire (real fetch against node:http)', () => {
  const seen: string[] = [];
  let base = '';
  const server = createServer((req, res) => {
    seen.push(req.url ?? '');
    res.end('ok');
  });
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('hostile path values reach the server still inside their segment', async () => {
    const o = op('/files/{name}', [
      { arg: 'name', name: 'name', in: 'path' },
      { arg: 'q', name: 'q', in: 'query' },
    ]);
    for (const name of ['../admin', 'a/b?c', '%2e%2e', '..%2f']) {
      const req = buildRequest(o, { name, q: 'x y' }, base);
      await (await fetch(req.url, { headers: req.headers })).text();
    }
    expect(seen).toEqual(['/api/files/..%2Fadmin?q=x%20y', '/api/files/a%2Fb%3Fc?q=x%20y', '/api/files/%252e%252e?q=x%20y', '/api/files/..%252f?q=x%20y']);
  });
});
