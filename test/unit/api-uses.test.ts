/**
 * Extra tools' `uses` through the compiler: an unknown operationId is a located error with a
 * did-you-mean; a used operation include/exclude leave out is modelled and emitted (typed, not
 * listed, not counted in the surface) and only the used ones are; the handler's `<Tool>Api` and
 * `<Tool>Context` types and the stub that uses them.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { compile } from '../../src/compile.js';

const SPEC = `openapi: 3.0.3
info: { title: t, version: '1' }
servers: [{ url: 'https://api.example.com' }]
paths:
  /pets:
    get: { operationId: listPets, responses: { '200': { description: ok, content: { application/json: { schema: { type: object, properties: { total: { type: integer } } } } } } } }
    post: { operationId: createPet, responses: { '201': { description: ok } } }
  /pets/{id}:
    parameters: [{ name: id, in: path, required: true, schema: { type: integer } }]
    get: { operationId: getPet, responses: { '200': { description: ok } } }
    delete: { operationId: deletePet, responses: { '204': { description: gone } } }
`;

function fixture(manifest: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'mcpgen-uses-'));
  writeFileSync(path.join(dir, 'openapi.yaml'), SPEC);
  writeFileSync(path.join(dir, 'mcpgen.yaml'), `name: uses\nopenapi: ./openapi.yaml\noutput: ./server\n${manifest}`);
  mkdirSync(path.join(dir, 'server'));
  return dir;
}

const tool = (uses: string) => `extraTools:
  - name: find_pet
    inputSchema: { type: object }
    uses: ${uses}
    handler: handlers/find.ts#findPet
`;

describe('extraTools[].uses', () => {
  it('an operationId the spec does not have is MCPGEN_UNKNOWN_OPERATION at the entry, with a did-you-mean', async () => {
    const dir = fixture(tool('[listPets, getPett]'));
    const res = await compile({ manifestPath: path.join(dir, 'mcpgen.yaml'), cwd: dir, emit: true });
    const errors = res.diagnostics.sorted().filter((d) => d.severity === 'error');
    expect(errors).toEqual([
      expect.objectContaining({
        code: 'MCPGEN_UNKNOWN_OPERATION',
        message: 'extraTools[0].uses names operationId "getPett", which the spec does not have',
        help: 'did you mean "getPet"?',
        location: expect.objectContaining({ file: 'mcpgen.yaml', pointer: '/extraTools/0/uses/1', line: 7 }),
      }),
    ]);
  });

  it('keeps only the used operations that are not tools: typed and emitted with the tools, not listed or measured', async () => {
    const dir = fixture(`exclude: [{ operationId: getPet }, { operationId: deletePet }]\n${tool('[listPets, getPet]')}`);
    const res = await compile({ manifestPath: path.join(dir, 'mcpgen.yaml'), cwd: dir, emit: true });
    expect(res.diagnostics.sorted().filter((d) => d.severity === 'error')).toEqual([]);
    const ir = res.ir!;
    expect(ir.tools.map((t) => t.name)).toEqual(['listPets', 'createPet']);
    // deletePet is excluded and used by nobody: not in the project
    expect(ir.apiOperations?.map((t) => t.name)).toEqual(['getPet']);
    expect(ir.surface!.tools.map((t) => t.name)).not.toContain('getPet');
    expect(ir.extraTools[0]!.uses).toEqual([
      { operationId: 'listPets', tool: 'listPets', constName: 'listPetsTool', argsTypeName: 'ListPetsArgs', resultTypeName: 'ListPetsResult' },
      { operationId: 'getPet', tool: 'getPet', constName: 'getPetTool', argsTypeName: 'GetPetArgs', resultTypeName: 'GetPetResult' },
    ]);

    const tools = res.files!.get('src/tools.gen.ts')!;
    expect(tools).toContain('/** Arguments of the `getPet` operation (not a tool: extra tools call it through `ctx.api`). */\nexport type GetPetArgs = {');
    expect(tools).toContain('export const getPetTool: OperationTool<GetPetArgs> = {');
    expect(tools).not.toContain('deletePet');
    expect(tools.slice(tools.indexOf('export const tools'))).not.toContain('getPetTool');

    const extra = res.files!.get('src/extra-tools.gen.ts')!;
    expect(extra).toContain("import { getPetTool, listPetsTool } from './tools.gen.js';");
    expect(extra).toContain('export type FindPetApi = {');
    expect(extra).toContain('  listPets: ApiOperation<ListPetsArgs, ListPetsResult>;');
    expect(extra).toContain('  getPet: ApiOperation<GetPetArgs, GetPetResult>;');
    expect(extra).toContain('export type FindPetContext = ExtraToolContext<FindPetApi>;');
    expect(extra).toContain('defineTool<FindPetArgs, FindPetResult, FindPetApi>(');
    expect(extra).toMatch(/"uses": \{\n {4}"listPets": listPetsTool,\n {4}"getPet": getPetTool\n {2}\}/);
    expect(res.files!.has('src/runtime/tools/api-client.ts')).toBe(true);

    // the stub types its context with ctx.api
    expect(res.stubs!.get('src/handlers/find.ts')).toContain(
      'export async function findPet(_args: FindPetArgs, _ctx: FindPetContext): Promise<FindPetResult> {',
    );
  });

  it('a tool without uses changes nothing: no API types, no apiOperations', async () => {
    const dir = fixture(
      `exclude: [{ operationId: getPet }]\nextraTools:\n  - { name: find_pet, inputSchema: { type: object }, handler: 'handlers/find.ts#findPet' }\n`,
    );
    const res = await compile({ manifestPath: path.join(dir, 'mcpgen.yaml'), cwd: dir, emit: true });
    expect(res.ir!.apiOperations).toBeUndefined();
    expect(res.files!.get('src/extra-tools.gen.ts')).not.toContain('Api');
    expect(res.files!.get('src/tools.gen.ts')).not.toContain('getPet');
    expect(res.stubs!.get('src/handlers/find.ts')).toContain('_ctx: ExtraToolContext)');
  });
});
