/**
 * `entry: custom` at build time: the policy keeps what the server needs to match primitives
 * registered at run time (each access rule's selector as `atRunTime`, each limits key as
 * `pattern`), the generated entry keeps none of it, and the emitted project is a library (its
 * src/index.ts, one-call src/server.ts, package.json exports, declarations).
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { compile } from '../../src/compile.js';

const FIXTURE = new URL('../fixtures/policy/', import.meta.url);
const BASE = readFileSync(new URL('base.yaml', FIXTURE), 'utf8');

async function build(extra: string) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'mcpgen-library-'));
  copyFileSync(new URL('openapi.yaml', FIXTURE), path.join(dir, 'openapi.yaml'));
  mkdirSync(path.join(dir, 'server/src/handlers'), { recursive: true });
  copyFileSync(new URL('handlers.ts', FIXTURE), path.join(dir, 'server/src/handlers/h.ts'));
  writeFileSync(path.join(dir, 'mcpgen.yaml'), BASE + extra);
  const res = await compile({ manifestPath: 'mcpgen.yaml', cwd: dir, emit: true });
  return { res, codes: res.diagnostics.sorted().map((d) => d.code) };
}

const POLICY = `policy:
  access:
    rules:
      - clients: [reader]
        deny: { names: ['flag_*'], kinds: [tools] }
      - clients: [ops]
        allow: { tags: [pets] }
      - clients: [ops]
        allow: { concerns: { risk: low }, annotations: { readOnlyHint: true } }
  limits:
    tools:
      'flag_*': { maxConcurrent: 1 }
      listPets: { maxConcurrent: 2 }
`;

describe('entry: custom', () => {
  it("keeps each rule's selector and each limits key for the primitives registered at run time (none for a tags selector)", async () => {
    const { res } = await build(`entry: custom\n${POLICY}`);
    const policy = res.ir!.policy!;
    expect(policy.access!.rules.map((r) => r.atRunTime)).toEqual([
      { kinds: ['tools'], names: ['flag_*'] },
      undefined,
      { concerns: { risk: ['low'] }, annotations: { readOnlyHint: true } },
    ]);
    // a key no built tool matches is kept for the registered ones
    expect(policy.limits!.tools.map((e) => [e.pattern, e.tools])).toEqual([
      ['flag_*', []],
      ['listPets', ['listPets']],
    ]);
    const files = res.files!;
    expect(files.get('src/server.ts')).toContain('await createServer().serve({ setup: register });');
    expect(files.get('src/index.ts')).toContain('export function createServer(): LibraryServer {');
    expect(files.get('src/index.ts')).toContain('createPolicy(registeredPolicy(policy, registry.primitives()), ');
    expect(files.get('src/runtime/library.ts')).toBeDefined();
    const pkg = JSON.parse(files.get('package.json')!) as Record<string, unknown>;
    expect(pkg.exports).toEqual({ '.': { types: './dist/index.d.ts', default: './dist/index.js' } });
    expect((JSON.parse(files.get('tsconfig.json')!) as { compilerOptions: Record<string, unknown> }).compilerOptions.declaration).toBe(true);
  });

  it('the generated bin keeps none of it and warns of a limits key that matches nothing; the package is a library all the same', async () => {
    const { res, codes } = await build(POLICY);
    const policy = res.ir!.policy!;
    expect(policy.access!.rules.every((r) => r.atRunTime === undefined)).toBe(true);
    expect(policy.limits!.tools.map((e) => [e.pattern, e.tools])).toEqual([[undefined, ['listPets']]]);
    expect(codes).toContain('MCPGEN_POLICY_UNMATCHED_LIMIT');
    const files = res.files!;
    // the bin is one main call; the library entry (every project) is beside it, not loaded by it
    expect(files.get('src/server.ts')).toContain('await main(config, tools, {');
    expect(files.get('src/server.ts')).not.toContain('library');
    expect(files.get('src/index.ts')).toContain('export function createServer(): LibraryServer {');
    expect(files.get('src/index.ts')).toContain('createPolicy(registeredPolicy(policy, registry.primitives()), ');
    expect(files.has('src/runtime/library.ts')).toBe(true);
    expect(files.has('src/main.ts')).toBe(false);
    expect((JSON.parse(files.get('package.json')!) as Record<string, unknown>).exports).toEqual({
      '.': { types: './dist/index.d.ts', default: './dist/index.js' },
    });
  });
});
