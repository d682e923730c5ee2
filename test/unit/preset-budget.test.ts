/**
 * Per-preset surfaces and budgets: each concern preset measured with the server's own matching
 * rule, and `budget.presets` limits failing the build with a located error that names the
 * preset's largest tools and the cheapest ways to get under.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { compile } from '../../src/compile.js';
import { waysUnder } from '../../src/ir/surface/ways-under.js';

const ops = Array.from(
  { length: 8 },
  (_, i) => `  /things${i}/{id}:
    ${i % 2 === 0 ? 'get' : 'delete'}:
      operationId: thing${i}
      description: Thing ${i}. ${'Long words about the thing. '.repeat(i * 2)}
      parameters: [{ name: id, in: path, required: true, schema: { type: string } }]
      responses: { '200': { description: ok, content: { application/json: { schema: { type: object, properties: { id: { type: string }, size: { type: integer }, ${'p'.repeat(i + 1)}: { type: string } } } } } } }
`,
).join('');
const SPEC = `openapi: 3.0.3\ninfo: { title: t, version: '1' }\nservers: [{ url: 'https://api.example.com' }]\npaths:\n${ops}`;
const CONCERNS = `concerns:
  - { name: access, values: [read, write] }
concernMappings:
  tools:
${Array.from({ length: 8 }, (_, i) => `    thing${i}: { access: ${i % 2 === 0 ? 'read' : 'write'} }`).join('\n')}
concernPresets:
  read-only: { access: read }
  writer: { access: write }
`;

function project(extra: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'mcpgen-preset-budget-'));
  writeFileSync(path.join(dir, 'openapi.yaml'), SPEC);
  writeFileSync(path.join(dir, 'mcpgen.yaml'), `name: presets\nopenapi: ./openapi.yaml\n${CONCERNS}${extra}`);
  return dir;
}

describe('per-preset surface', () => {
  it('measures each preset with the matching rule of the server', async () => {
    const res = await compile({ manifestPath: 'mcpgen.yaml', cwd: project(''), emit: false });
    expect(res.diagnostics.items).toEqual([]);
    const s = res.ir!.surface!;
    expect(s.presets.map((p) => [p.name, p.tools])).toEqual([
      ['read-only', ['thing0', 'thing2', 'thing4', 'thing6']],
      ['writer', ['thing1', 'thing3', 'thing5', 'thing7']],
    ]);
    for (const p of s.presets) expect(p.listBytes).toBe(s.tools.filter((t) => p.tools.includes(t.name)).reduce((a, t) => a + t.bytes, 0) + 3 + 2);
  });

  it('fails over a preset budget, located, with the largest tools and the cheapest ways under', async () => {
    const full = await compile({ manifestPath: 'mcpgen.yaml', cwd: project(''), emit: false });
    const ro = full.ir!.surface!.presets[0]!;
    const dir = project(`budget:\n  presets:\n    read-only: { maxListBytes: ${ro.listBytes - 300}, maxTools: 3 }\n    writer: { maxListBytes: 1000000 }\n`);
    const res = await compile({ manifestPath: 'mcpgen.yaml', cwd: dir, emit: false });
    const errors = res.diagnostics.items.filter((d) => d.severity === 'error');
    expect(errors.map((e) => [e.code, e.location.pointer])).toEqual([
      ['MCPGEN_OVER_BUDGET', '/budget/presets/read-only/maxListBytes'],
      ['MCPGEN_OVER_BUDGET', '/budget/presets/read-only/maxTools'],
    ]);
    const e = errors[0]!;
    expect(e.location.line).toBeGreaterThan(0);
    expect(e.message).toMatch(
      new RegExp(
        `^preset "read-only": tools/list is ${ro.listBytes} bytes, over budget.presets.read-only.maxListBytes ${ro.listBytes - 300}; the largest tools:\\n {2}- thing6 `,
      ),
    );
    // only the preset's own tools are named
    expect(e.message).not.toMatch(/thing[1357]/);
    expect(e.message).toContain('cheapest ways to get under (300 bytes):');
    expect(e.message).toMatch(
      /`outputSchemas: none` on 2 tool\(s\) \(thing6, thing4\)|`exclude` \(or map out of preset "read-only" in `concernMappings`\) 1 tool\(s\) \(thing6\)/,
    );
    expect(errors[1]!.message).toBe('preset "read-only" lists 4 tools, over budget.presets.read-only.maxTools 3');
  });

  it('a budget for an undeclared preset is a located error', async () => {
    const res = await compile({ manifestPath: 'mcpgen.yaml', cwd: project('budget:\n  presets:\n    reader: { maxTools: 3 }\n'), emit: false });
    expect(res.diagnostics.items.map((d) => [d.code, d.location.pointer, d.help])).toEqual([
      ['MCPGEN_UNKNOWN_PRESET', '/budget/presets/reader', 'use one of "read-only", "writer"'],
    ]);
  });

  it('counts tokens per preset when a preset has a token budget', async () => {
    const res = await compile({ manifestPath: 'mcpgen.yaml', cwd: project('budget:\n  presets:\n    writer: { maxTokens: 50 }\n'), emit: false });
    const e = res.diagnostics.items.find((d) => d.code === 'MCPGEN_OVER_BUDGET')!;
    expect(e.location.pointer).toBe('/budget/presets/writer/maxTokens');
    expect(e.message).toMatch(
      /^preset "writer": tools\/list is \d+ tokens, over budget.presets.writer.maxTokens 50; the largest tools:\n {2}- thing7 \d+ tokens/,
    );
    expect(res.ir!.surface!.presets.every((p) => p.tokens!.total > 0)).toBe(true);
  });

  it('waysUnder orders the ways by how few tools they touch', () => {
    const tools = [
      { name: 'a', bytes: 1000, inputBytes: 100, outputBytes: 800, descriptionBytes: 50 },
      { name: 'b', bytes: 500, inputBytes: 400, outputBytes: 0, descriptionBytes: 50 },
      { name: 'c', bytes: 400, inputBytes: 300, outputBytes: 50, descriptionBytes: 10 },
    ];
    expect(waysUnder(tools, 900)).toEqual(['`exclude` 1 tool(s) (a): saves 1001 bytes']);
    expect(waysUnder(tools, 700)).toEqual(['`outputSchemas: none` on 1 tool(s) (a): saves 816 bytes', '`exclude` 1 tool(s) (a): saves 1001 bytes']);
  });
});
