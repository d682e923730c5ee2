/**
 * atomicWrite: a temporary sibling with a random name, created exclusively, then renamed — so
 * concurrent writes of one file never share a temporary file, and the mode asked for is the file's.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { atomicWrite } from '../../src/write/tree.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'mcpgen-atomic-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('concurrent writes of one file all land (the last rename wins) and leave no temporary file', async () => {
  const file = path.join(dir, 'sub/manifest.yaml');
  const texts = Array.from({ length: 8 }, (_, i) => `version ${i}\n`);
  await Promise.all(texts.map((t) => atomicWrite(file, t)));
  expect(texts).toContain(readFileSync(file, 'utf8'));
  expect(readdirSync(path.dirname(file))).toEqual(['manifest.yaml']);
});

it("gives the file the mode asked for (mcpgen fix keeps the manifest's), 0644 by default", async () => {
  const a = path.join(dir, 'a.yaml');
  const b = path.join(dir, 'b.yaml');
  await atomicWrite(a, 'x', { mode: 0o600 });
  await atomicWrite(b, 'y');
  expect(statSync(a).mode & 0o777).toBe(0o600);
  expect(statSync(b).mode & 0o777).toBe(0o644 & ~process.umask());
});
