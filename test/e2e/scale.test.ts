/**
 * Any number of operations type-checks: a synthetic 5,000-operation spec (test/helpers/
 * synthetic-spec.ts) is built in a temp folder and its project compiled with tsc. Before the
 * tool table widened each element, tsc failed on it with TS2590 ("union type too complex")
 * from about 1,400 operations, while mcpgen exited 0.
 */
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { ROOT, typecheck } from '../helpers/project.js';
import { syntheticSpec } from '../helpers/synthetic-spec.js';

const OPERATIONS = 5000;
const dir = mkdtempSync(path.join(os.tmpdir(), 'mcpgen-scale-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it(`a ${OPERATIONS}-operation spec builds into a project that type-checks`, async () => {
  writeFileSync(path.join(dir, 'openapi.json'), JSON.stringify(syntheticSpec(OPERATIONS)));
  writeFileSync(path.join(dir, 'mcpgen.yaml'), 'name: synthetic\nopenapi: ./openapi.json\noutput: ./server\n');
  let err = '';
  const io = { stdout: () => undefined, stderr: (s: string) => void (err += s), cwd: dir };
  expect(await main(['build', 'mcpgen.yaml'], io), err).toBe(0);
  // the temp folder is outside the repository: resolve the project's dependencies from mcpgen's
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'server/node_modules'), 'dir');

  const started = performance.now();
  const tsc = await typecheck(path.join(dir, 'server'));
  expect(tsc.output).toBe('');
  expect(tsc.ok).toBe(true);
  console.log(`tsc on ${OPERATIONS} tools: ${Math.round(performance.now() - started)} ms`);
}, 300_000);
