import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OperationTool } from '../../../templates/runtime/core/types.js';
import { sendOperation } from '../../../templates/runtime/operation/operation-call.js';
import type { Settings } from '../../../templates/runtime/process/settings.js';

const seen: Array<{ headers: IncomingMessage['headers']; body: Buffer }> = [];
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    seen.push({ headers: req.headers, body: Buffer.concat(chunks) });
    res.writeHead(204);
    res.end();
  });
});
let base = '';
const dir = mkdtempSync(path.join(os.tmpdir(), 'mcpgen-uploads-'));
const root = path.join(dir, 'root');

beforeAll(async () => {
  mkdirSync(root);
  writeFileSync(path.join(root, 'photo.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 255]));
  writeFileSync(path.join(dir, 'secret.txt'), 'top secret');
  symlinkSync(path.join(dir, 'secret.txt'), path.join(root, 'link.txt'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => server.close());

const upload: OperationTool = {
  kind: 'operation',
  name: 'upload',
  inputSchema: { type: 'object', properties: { body: { type: 'object' } } },
  http: { method: 'POST', path: '/upload', params: [], body: { arg: 'body', contentType: 'multipart/form-data', files: ['file'] } },
};
const raw: OperationTool = {
  kind: 'operation',
  name: 'raw',
  inputSchema: { type: 'object', properties: { body: {} } },
  http: { method: 'PUT', path: '/raw', params: [], body: { arg: 'body', contentType: 'application/octet-stream', binary: true } },
};
const settings = (uploadRoot?: string): Settings => ({
  baseUrl: base,
  timeoutMs: 5000,
  maxResponseBytes: 10_000,
  envPrefix: 'X',
  ...(uploadRoot ? { uploadRoot } : {}),
});
const text = (r: { content: unknown }) => (r.content as Array<{ text: string }>).map((c) => c.text).join('\n');

describe('file uploads', () => {
  it('sends a base64 file field as a binary file part next to text fields', async () => {
    const bytes = Buffer.from([0, 1, 2, 250, 251, 255]);
    const r = (await sendOperation(upload, { body: { file: bytes.toString('base64'), note: 'hi' } }, settings())).result;
    expect(r.isError).toBeFalsy();
    const req = seen.at(-1)!;
    const boundary = /boundary=(\S+)/.exec(req.headers['content-type']!)![1]!;
    const body = req.body;
    const filePart = body.indexOf('filename="file"');
    expect(filePart).toBeGreaterThan(0);
    const start = body.indexOf('\r\n\r\n', filePart) + 4;
    expect(body.subarray(start, start + bytes.length)).toEqual(bytes);
    expect(body.toString('latin1')).toContain('name="note"\r\n\r\nhi\r\n');
    expect(body.toString('latin1').endsWith(`--${boundary}--\r\n`)).toBe(true);
  });

  it('refuses a local path unless local uploads are enabled', async () => {
    const before = seen.length;
    const r = (await sendOperation(upload, { body: { file: { path: 'photo.png' } } }, settings())).result;
    expect(r.isError).toBe(true);
    expect(text(r)).toMatch(/local file paths are not enabled/);
    expect(seen.length).toBe(before);
  });

  it('reads a local file inside the upload root, with its name', async () => {
    const r = (await sendOperation(upload, { body: { file: { path: 'photo.png', contentType: 'image/png' } } }, settings(root))).result;
    expect(r.isError).toBeFalsy();
    const body = seen.at(-1)!.body.toString('latin1');
    expect(body).toContain('filename="photo.png"\r\nContent-Type: image/png\r\n\r\n\u0089PNG');
  });

  it.each([['../secret.txt'], [path.join(dir, 'secret.txt')], ['link.txt'], ['missing.bin']])('never reads %s from outside the root', async (p) => {
    const before = seen.length;
    const r = (await sendOperation(upload, { body: { file: { path: p } } }, settings(root))).result;
    expect(r.isError).toBe(true);
    expect(text(r)).not.toContain('top secret');
    expect(seen.length).toBe(before);
  });

  it('sends a whole binary body from base64 or from a local file', async () => {
    (await sendOperation(raw, { body: Buffer.from('abc').toString('base64') }, settings())).result;
    expect(seen.at(-1)!.body.toString()).toBe('abc');
    (await sendOperation(raw, { body: { path: 'photo.png' } }, settings(root))).result;
    expect([...seen.at(-1)!.body]).toEqual([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 255]);
    const bad = (await sendOperation(raw, { body: 'not base64!' }, settings())).result;
    expect(bad.isError).toBe(true);
    expect(text(bad)).toMatch(/base64/);
  });
});
