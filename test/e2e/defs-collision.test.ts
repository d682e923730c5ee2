/**
 * `$defs` type names are decided once, in the IR, collision-free: the defs-collision fixture
 * (an extra tool whose `$defs` keys `a-b`, `a_b`, `a.b` all sanitise to `a_b`, and recursive
 * component schemas `tree-node` / `tree_node` / `tree.node` in one operation) builds into a
 * project that type-checks, with its committed handler using each definition's own type.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { ROOT, typecheck } from '../helpers/project.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'mcpgen-defs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('clashing $defs names each get their own type and the project type-checks', async () => {
  cpSync(path.join(ROOT, 'test/fixtures/defs-collision'), dir, { recursive: true });
  let err = '';
  const io = { stdout: () => undefined, stderr: (s: string) => void (err += s), cwd: dir };
  expect(await main(['build', 'mcpgen.yaml'], io), err).toBe(0);

  const extra = readFileSync(path.join(dir, 'server/src/extra-tools.gen.ts'), 'utf8');
  const declared = (src: string) => [...src.matchAll(/^export type (\S+) =/gm)].map((m) => m[1]!);
  expect(declared(extra)).toEqual([
    'ShapesArgs',
    'ShapesArgs$a_b_3',
    'ShapesArgs$a_b',
    'ShapesArgs$a_b_4',
    'ShapesArgs$a_b_2',
    'ShapesResult',
    'ShapesResult$n_1_2',
    'ShapesResult$n_1',
  ]);
  const tools = declared(readFileSync(path.join(dir, 'server/src/tools.gen.ts'), 'utf8'));
  expect(new Set(tools).size).toBe(tools.length);
  expect(tools.filter((t) => t.startsWith('InputDef$'))).toEqual(['InputDef$tree_node_2', 'InputDef$tree_node_3', 'InputDef$tree_node']);

  symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'server/node_modules'), 'dir');
  const tsc = await typecheck(path.join(dir, 'server'));
  expect(tsc.output).toBe('');
  expect(tsc.ok).toBe(true);
}, 120_000);
