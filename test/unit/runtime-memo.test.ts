/**
 * The runtime's import graph kept in the build cache (src/emit/runtime-memo.ts, issue 24): the
 * files copied are the same with the memo as without; an entry for a module whose source changed
 * is read anew, never trusted; a partial, corrupted or misshapen entry file is read as none.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cacheEntryBytes } from '../../src/core/cache-entry.js';
import { runtimeFiles } from '../../src/emit/runtime.js';
import { type RuntimeImportMemo, readRuntimeImportMemo, saveRuntimeImportMemo } from '../../src/emit/runtime-memo.js';
import { entryParts } from '../helpers/cache-entry.js';

const temps: string[] = [];
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});
const tmp = () => {
  const d = mkdtempSync(path.join(os.tmpdir(), 'mcpgen-runtime-memo-'));
  temps.push(d);
  return d;
};

// a generated file that reaches many runtime modules
const generated = ["import { createServer } from './runtime/server/server.js';\nimport { main } from './runtime/main.js';\nexport { createServer, main };\n"];
const FILE = 'runtime-imports.entry';

describe('the runtime import memo', () => {
  it('copies the same files as without a memo, and a second run reads every import from it', async () => {
    const dir = tmp();
    const without = runtimeFiles(generated);
    const memo = await readRuntimeImportMemo(dir);
    expect(memo.known.size).toBe(0);
    expect(runtimeFiles(generated, [], memo)).toEqual(without);
    expect(memo.changed).toBe(true);
    expect(await saveRuntimeImportMemo(dir, memo)).toBe(true);
    const again = await readRuntimeImportMemo(dir);
    expect(again.known).toEqual(memo.known);
    expect(runtimeFiles(generated, [], again)).toEqual(without);
    expect(again.changed).toBe(false);
    expect(await saveRuntimeImportMemo(dir, again)).toBe(false);
  });

  it('reads a module anew when its remembered hash is not its source (a wrong import list is never used)', async () => {
    const without = runtimeFiles(generated);
    const memo: RuntimeImportMemo = { known: new Map(), changed: false };
    runtimeFiles(generated, [], memo);
    // server/server.ts remembered with imports it does not have, under another hash
    memo.known.set('server/server.ts', { sha256: '0'.repeat(64), imports: ['nope/missing.ts'] });
    memo.changed = false;
    expect(runtimeFiles(generated, [], memo)).toEqual(without);
    expect(memo.changed).toBe(true);
    expect(memo.known.get('server/server.ts')!.imports).not.toContain('nope/missing.ts');
  });

  it('reads a partial, corrupted, misshapen or foreign entry file as none', async () => {
    const dir = tmp();
    const memo = await readRuntimeImportMemo(dir);
    runtimeFiles(generated, [], memo);
    await saveRuntimeImportMemo(dir, memo);
    const whole = readFileSync(path.join(dir, FILE), 'utf8');
    const nl = whole.indexOf('\n');
    const { header, body } = entryParts(path.join(dir, FILE));
    const withBody = (b: string, h: Record<string, unknown> = header) => cacheEntryBytes(h, b).toString('utf8');
    const damaged: Array<[string, string]> = [
      ['cut short', whole.slice(0, Math.floor(whole.length * 0.6))],
      ['header only', whole.slice(0, nl + 1)],
      ['changed body', whole.replace('"server/server.ts"', '"server/server.tx"')],
      ['wrong shape', withBody(JSON.stringify({ 'main.ts': { sha256: 'x', imports: 'core/era.ts' } }))],
      ['not an object', withBody('[]')],
      ['another mcpgen', withBody(body, { ...header, mcpgen: 'f'.repeat(64) })],
    ];
    for (const [what, text] of damaged) {
      writeFileSync(path.join(dir, FILE), text);
      expect((await readRuntimeImportMemo(dir)).known.size, what).toBe(0);
    }
    writeFileSync(path.join(dir, FILE), withBody(body));
    expect((await readRuntimeImportMemo(dir)).known.size).toBeGreaterThan(0);
  });
});
