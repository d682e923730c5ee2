/**
 * The tool surface at build time: the bytes reported, and `budget` limits failing the build with a
 * located error that names the largest tools.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { compile } from '../../src/compile.js';

const ops = Array.from(
  { length: 12 },
  (_, i) => `  /things${i}/{id}:
    get:
      operationId: getThing${i}
      summary: Get thing ${i}.
      description: Thing ${i}. ${'Long words about the thing. '.repeat(i * 3)}
      parameters: [{ name: id, in: path, required: true, schema: { type: string } }]
      responses: { '200': { description: ok, content: { application/json: { schema: { type: object, properties: { id: { type: string }, size: { type: integer } } } } } } }
`,
).join('');
const SPEC = `openapi: 3.0.3\ninfo: { title: t, version: '1' }\nservers: [{ url: 'https://api.example.com' }]\npaths:\n${ops}`;

function project(manifestExtra: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'mcpgen-budget-'));
  writeFileSync(path.join(dir, 'openapi.yaml'), SPEC);
  writeFileSync(path.join(dir, 'mcpgen.yaml'), `name: budget\nopenapi: ./openapi.yaml\n${manifestExtra}`);
  return dir;
}

describe('budget', () => {
  it('measures the surface and passes within budget', async () => {
    const res = await compile({ manifestPath: 'mcpgen.yaml', cwd: project(''), emit: false });
    expect(res.diagnostics.items).toEqual([]);
    const s = res.ir!.surface!;
    expect(s.tools).toHaveLength(12);
    expect(s.withOutputSchema).toBe(12);
    expect(s.listBytes).toBe(s.tools.reduce((a, t) => a + t.bytes, 0) + 11 + 2);
  });

  it('fails over budget.maxListBytes, located, naming the ten largest tools first', async () => {
    const dir = project('budget:\n  maxListBytes: 2000\n');
    const res = await compile({ manifestPath: 'mcpgen.yaml', cwd: dir, emit: false });
    const errors = res.diagnostics.items.filter((d) => d.severity === 'error');
    expect(errors).toHaveLength(1);
    const e = errors[0]!;
    expect(e.code).toBe('MCPGEN_OVER_BUDGET');
    expect(e.location).toMatchObject({ file: 'mcpgen.yaml', pointer: '/budget/maxListBytes', line: 4, col: 17 });
    expect(e.message).toMatch(new RegExp(`^tools/list is ${res.ir!.surface!.listBytes} bytes, over budget.maxListBytes 2000; the largest tools:`));
    const named = [...e.message.matchAll(/\n {2}- (\S+) (\d+) bytes/g)].map((m) => [m[1], Number(m[2])]);
    expect(named).toHaveLength(10);
    expect(named[0]![0]).toBe('getThing11');
    expect(named.map((n) => n[1])).toEqual([...named.map((n) => n[1])].sort((a, b) => (b as number) - (a as number)));
    expect(e.message).toContain('exclude it, or a shorter `description` override');
    expect(e.message).toMatch(new RegExp(`\\n {2}cheapest ways to get under \\(${res.ir!.surface!.listBytes - 2000} bytes\\):\\n {4}- `));
    // nothing is written, and the CLI exits 1
    const out: string[] = [];
    const code = await main(['build', 'mcpgen.yaml'], { stdout: (s) => out.push(s), stderr: (s) => out.push(s), cwd: dir });
    expect(code).toBe(1);
    expect(out.join('')).toContain('mcpgen.yaml:4:17 error MCPGEN_OVER_BUDGET');
  });

  it('warns above a quarter of the budget, and fails over maxTools and maxTokens', async () => {
    const full = await compile({ manifestPath: 'mcpgen.yaml', cwd: project(''), emit: false });
    const bytes = full.ir!.surface!.listBytes;
    const warn = await compile({ manifestPath: 'mcpgen.yaml', cwd: project(`budget:\n  maxListBytes: ${bytes * 2}\n`), emit: false });
    expect(warn.diagnostics.items.map((d) => [d.code, d.severity])).toEqual([['MCPGEN_LARGE_SURFACE', 'warning']]);
    const tools = await compile({ manifestPath: 'mcpgen.yaml', cwd: project('budget:\n  maxTools: 5\n'), emit: false });
    expect(tools.diagnostics.items.map((d) => [d.code, d.message])).toEqual([['MCPGEN_OVER_BUDGET', 'the server publishes 12 tools, over budget.maxTools 5']]);
    const tokens = await compile({ manifestPath: 'mcpgen.yaml', cwd: project('budget:\n  maxTokens: 100\n'), emit: false });
    const t = tokens.diagnostics.items.find((d) => d.code === 'MCPGEN_OVER_BUDGET')!;
    expect(t.message).toMatch(/^tools\/list is \d+ tokens, over budget.maxTokens 100; the largest tools:\n {2}- getThing11 \d+ tokens/);
    expect(tokens.ir!.surface!.tokens!.total).toBeGreaterThan(100);
  });

  it('drops output schemas over outputSchemaMaxBytes with one warning naming the tools', async () => {
    const res = await compile({ manifestPath: 'mcpgen.yaml', cwd: project('outputSchemaMaxBytes: 10\n'), emit: false });
    const d = res.diagnostics.items;
    expect(d.map((x) => x.code)).toEqual(['MCPGEN_OUTPUT_SCHEMA_DROPPED']);
    expect(d[0]!.message).toBe(
      '12 tool(s) publish no output schema because theirs is larger than outputSchemaMaxBytes 10: getThing0, getThing1, getThing2, getThing3, getThing4, getThing5, getThing6, getThing7, getThing8, getThing9, getThing10, getThing11',
    );
    expect(res.ir!.surface!.withOutputSchema).toBe(0);
    expect(res.ir!.tools.every((t) => t.outputSchema === undefined)).toBe(true);
  });
});
