/**
 * File arguments: a file field of a multipart body, or a whole binary body, is given either as
 * base64 content or — only when the manifest enables local uploads — as `{ path }` of a local
 * file inside the upload root. Paths are resolved through symlinks and must stay inside the
 * root, so `../` or a link cannot read anything else; the file's size is capped.
 */
import { open, realpath } from 'node:fs/promises';
import path from 'node:path';
import { isRecord } from '../core/json-shapes.js';
import type { HttpOperation } from '../core/types.js';
import type { Settings } from '../process/settings.js';
import { decodeBase64, type FilePart, RequestBuildError } from './request.js';

/** Largest local file an upload may read (bytes). */
export const MAX_UPLOAD_BYTES = 50 * 1024 * 1024;

async function readLocal(arg: string, ref: Record<string, unknown>, settings: Settings): Promise<FilePart> {
  if (settings.uploadRoot === undefined) {
    throw new RequestBuildError(arg, `${arg}: local file paths are not enabled for this server; pass the file content base64-encoded instead`);
  }
  if (typeof ref.path !== 'string' || ref.path === '') throw new RequestBuildError(arg, `${arg}.path must be a non-empty string`);
  let root: string;
  let file: string;
  try {
    root = await realpath(settings.uploadRoot);
    file = await realpath(path.resolve(root, ref.path));
  } catch {
    throw new RequestBuildError(arg, `${arg}.path: no such file inside the upload directory`);
  }
  if (!file.startsWith(root + path.sep)) throw new RequestBuildError(arg, `${arg}.path must name a file inside the upload directory`);
  const handle = await open(file, 'r');
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw new RequestBuildError(arg, `${arg}.path is not a regular file`);
    if (stat.size > MAX_UPLOAD_BYTES) throw new RequestBuildError(arg, `${arg}.path is larger than ${MAX_UPLOAD_BYTES} bytes`);
    const bytes = new Uint8Array(await handle.readFile());
    return {
      kind: 'file',
      bytes,
      filename: typeof ref.filename === 'string' ? ref.filename : path.basename(file),
      contentType: typeof ref.contentType === 'string' ? ref.contentType : 'application/octet-stream',
    };
  } finally {
    await handle.close();
  }
}

async function toFilePart(arg: string, value: unknown, fallbackName: string, settings: Settings): Promise<FilePart> {
  if (isRecord(value)) return readLocal(arg, value, settings);
  return { kind: 'file', bytes: decodeBase64(arg, value), filename: fallbackName, contentType: 'application/octet-stream' };
}

/**
 * Replaces file arguments of `op`'s body by {@link FilePart}s (reading local files where
 * allowed). Returns new arguments; the input is not modified. Throws `RequestBuildError`.
 */
export async function resolveUploads(op: HttpOperation, args: Record<string, unknown>, settings: Settings): Promise<Record<string, unknown>> {
  const body = op.body;
  const value = body && Object.hasOwn(args, body.arg) ? args[body.arg] : undefined;
  if (!body || value === undefined) return args;
  if (body.binary) return { ...args, [body.arg]: await toFilePart(body.arg, value, body.arg, settings) };
  if (!body.files?.length || !isRecord(value)) return args;
  const out: Record<string, unknown> = { ...value };
  for (const field of body.files) {
    const v = Object.hasOwn(value, field) ? value[field] : undefined;
    if (v === undefined) continue;
    const where = `${body.arg}.${field}`;
    const part = Array.isArray(v)
      ? await Promise.all(v.map((item, i) => toFilePart(`${where}[${i}]`, item, field, settings)))
      : await toFilePart(where, v, field, settings);
    // defineProperty: a field named `__proto__` stays a field
    Object.defineProperty(out, field, { value: part, enumerable: true, writable: true, configurable: true });
  }
  return { ...args, [body.arg]: out };
}
