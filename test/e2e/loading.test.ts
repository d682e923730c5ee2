/**
 * Loading through the whole pipeline: multi-file specs with local $refs, recursion across files,
 * and determinism when the spec's unordered maps are shuffled.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { compile } from '../../src/compile.js';
import { portabilityProblems } from '../helpers/portability.js';
import { ROOT } from '../helpers/project.js';

describe('spec loading', () => {
  it('bundles a multi-file spec, keeping a schema that refers to itself across files as $defs', async () => {
    const res = await compile({ manifestPath: path.join(ROOT, 'test/fixtures/multi-file/mcpgen.yaml'), cwd: ROOT, emit: true });
    expect(res.diagnostics.items).toEqual([]);
    const [getNode, putNode] = res.ir!.tools;
    expect(getNode!.inputSchema.properties).toEqual({ id: { type: 'string', pattern: '^[a-z0-9-]+$' } });
    // the (lenient) output schema describes the recursion down to its depth and types it below
    const out = getNode!.outputSchema!;
    expect(out.type).toBe('object');
    expect(portabilityProblems(out)).toEqual([]);
    const nullable = (x: unknown) => ({ anyOf: [x, { type: 'null' }] });
    const name = nullable({ type: 'string' });
    expect(out).toEqual({
      type: 'object',
      properties: {
        name,
        children: nullable({
          type: 'array',
          items: nullable({ type: 'object', properties: { name, children: nullable({ type: 'array', items: nullable({ type: 'object' }) }) } }),
        }),
      },
    });
    // the input schema keeps the recursion as $defs + $ref across files
    const input = putNode!.inputSchema;
    expect(portabilityProblems(input)).toEqual([]);
    const defName = Object.keys(input.$defs as object)[0]!;
    const body = (input.properties as Record<string, { properties: Record<string, unknown> }>).body!;
    expect(body.properties.children).toEqual({ type: 'array', items: { $ref: `#/$defs/${defName}` } });
    // the generated type is recursive too, not expanded
    const tools = res.files!.get('src/tools.gen.ts')!;
    expect(tools).toMatch(new RegExp(`children\\?: Array<InputDef\\$${defName}>;`));
  });

  it('gives the same bytes when the spec lists its paths, components and properties in another order', async () => {
    const dir = path.join(ROOT, '.cache/shuffled');
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const spec = parse(readFileSync(path.join(ROOT, 'examples/petstore/openapi.yaml'), 'utf8')) as Record<string, Record<string, Record<string, unknown>>>;
    const reverse = <T extends object>(o: T): T => Object.fromEntries(Object.entries(o).reverse()) as T;
    // components and info are unordered maps; paths keep their order (tools follow spec order)
    const shuffled = { ...reverse(spec), paths: spec.paths, components: { schemas: reverse(spec.components!.schemas!) }, info: reverse(spec.info!) };
    writeFileSync(path.join(dir, 'openapi.json'), JSON.stringify(shuffled));
    writeFileSync(
      path.join(dir, 'mcpgen.yaml'),
      readFileSync(path.join(ROOT, 'examples/petstore/mcpgen.yaml'), 'utf8').replace('./openapi.yaml', './openapi.json'),
    );
    const a = await compile({ manifestPath: path.join(ROOT, 'examples/petstore/mcpgen.yaml'), cwd: ROOT, emit: true });
    const b = await compile({ manifestPath: path.join(dir, 'mcpgen.yaml'), cwd: ROOT, emit: true });
    expect([...b.files!.keys()]).toEqual([...a.files!.keys()]);
    for (const [file, content] of a.files!) expect(b.files!.get(file), file).toBe(content);
  });
});
