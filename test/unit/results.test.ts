import { Ajv2020 } from 'ajv/dist/2020.js';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import { Diagnostics } from '../../src/core/diagnostics.js';
import { emitProject } from '../../src/emit/index.js';
import { emitConfigFile, serverConfig } from '../../src/emit/ts/entry.js';
import { emitToolsFile } from '../../src/emit/ts/tools.js';
import type { BuildManifest } from '../../src/ir/build.js';
import { compactJson, PROJECTION_DESCRIPTION, projectionArgName } from '../../src/ir/tools/results.js';
import { resolveResults } from '../../src/manifest/load.js';
import { validateManifest } from '../../src/manifest/validate.js';
import type { SpecVersion } from '../../src/openapi/load.js';
import { parseYamlSource } from '../../src/source/source.js';
import { irFromText } from '../helpers/ir.js';

const ISSUE = {
  number: 1347,
  title: 'Found a bug',
  state: 'open',
  user: { login: 'octocat', id: 1, node_id: 'MDQ6VXNlcjE=', avatar_url: 'https://github.com/images/error/octocat_happy.gif', gravatar_id: '' },
  labels: [],
  assignee: null,
  body: 'I am having a problem with this.',
  html_url: 'https://github.com/octocat/Hello-World/issues/1347',
  created_at: '2011-04-22T13:33:48Z',
};
const PULL = {
  number: 1,
  title: 'Amazing new feature',
  state: 'open',
  user: { login: 'octocat' },
  draft: false,
  milestone: null,
  merged_at: null,
  body: 'Please pull these awesome changes in!',
  created_at: '2011-01-26T19:01:12Z',
  updated_at: '2011-01-26T19:01:12Z',
  head: { ref: 'new-topic', sha: '6dcb09b5b57875f334f61aebed695e2e4193db5e' },
  base: { ref: 'main', sha: '6dcb09b5b57875f334f61aebed695e2e4193db5e' },
};

const SPEC = {
  openapi: '3.0.3',
  info: { title: 't', version: '1' },
  servers: [{ url: 'https://api.example.com' }],
  paths: {
    '/issues': {
      get: {
        operationId: 'listIssues',
        parameters: [{ name: 'fields', in: 'query', schema: { type: 'string' } }],
        responses: {
          '200': { description: 'ok', content: { 'application/json': { schema: { type: 'array', items: { type: 'object' } }, example: [ISSUE, ISSUE] } } },
        },
      },
    },
    '/pulls': {
      get: {
        operationId: 'listPulls',
        responses: {
          '200': {
            description: 'ok',
            content: {
              'application/json': {
                schema: { type: 'array', items: { type: 'object' } },
                examples: { one: { $ref: '#/components/examples/pull' }, two: { value: [PULL, PULL] } },
              },
            },
          },
        },
      },
    },
    '/pulls/{n}': {
      patch: {
        operationId: 'updatePull',
        parameters: [
          { name: 'n', in: 'path', required: true, schema: { type: 'integer' } },
          { name: 'fields', in: 'query', schema: { type: 'string' } },
          { name: 'result_fields', in: 'query', schema: { type: 'string' } },
        ],
        responses: { '200': { description: 'ok', content: { 'application/json': { schema: { type: 'object' }, example: { number: 1, title: 'short' } } } } },
      },
      delete: {
        operationId: 'deletePull',
        parameters: [{ name: 'n', in: 'path', required: true, schema: { type: 'integer' } }],
        responses: { '204': { description: 'gone' } },
      },
    },
    '/avatar': {
      get: {
        operationId: 'getAvatar',
        responses: { '200': { description: 'png', content: { 'image/png': { schema: { type: 'string', format: 'binary' } } } } },
      },
    },
    '/ping': { get: { operationId: 'ping', responses: { default: { description: 'anything' } } } },
  },
  components: { examples: { pull: { value: [PULL] } } },
};

function build(manifest: Partial<BuildManifest> = {}, spec: Record<string, unknown> = SPEC, version: SpecVersion = '3.0') {
  const { ir, diagnostics } = irFromText({ spec: JSON.stringify(spec), specFile: 'openapi.json', version, manifest });
  expect(diagnostics.items.filter((d) => d.severity === 'error')).toEqual([]);
  return ir;
}

const tool = (ir: ReturnType<typeof build>, name: string) => ir.tools.find((t) => t.name === name)!;

/** The calibration as the build should compute it: bytes of compacted JSON over their o200k tokens, pooled. */
function expectedRatio(examples: unknown[], omit = resolveResults(undefined).omit): number {
  const texts = examples.map((e) => JSON.stringify(compactJson(e, { omit, maxStringChars: 1000 })));
  const bytes = texts.reduce((n, t) => n + Buffer.byteLength(t), 0);
  const tokens = texts.reduce((n, t) => n + countTokens(t), 0);
  return Math.round((bytes / tokens) * 100) / 100;
}

describe('manifest schema: results', () => {
  const check = (yaml: string) => {
    const diagnostics = new Diagnostics();
    const source = parseYamlSource({ file: 'mcpgen.yaml', text: `name: x\nopenapi: ./o.yaml\n${yaml}`, diagnostics, syntaxCode: 'MCPGEN_MANIFEST_SYNTAX' })!;
    return { valid: validateManifest(source, diagnostics), pointers: diagnostics.items.map((d) => [d.code, d.location.pointer]) };
  };

  it('accepts every key at the top level and in an override', () => {
    expect(check('results: { maxTokens: 256, compact: false, omit: ["*_url", "etag"], maxStringChars: 64, projection: true }\n').valid).toBe(true);
    expect(check('results: { omit: [] }\noverrides:\n  listPets: { results: { maxTokens: 20000, projection: false, omit: [] } }\n').valid).toBe(true);
  });

  it('rejects values out of range, unknown keys and bad omit lists, where they are', () => {
    expect(check('results: { maxTokens: 255 }\n')).toEqual({ valid: false, pointers: [['MCPGEN_MANIFEST_INVALID', '/results/maxTokens']] });
    expect(check('results: { maxStringChars: 63 }\n').pointers).toEqual([['MCPGEN_MANIFEST_INVALID', '/results/maxStringChars']]);
    expect(check('results: { omit: ["a", "a"] }\n').pointers).toEqual([['MCPGEN_MANIFEST_INVALID', '/results/omit/1']]);
    expect(check('results: { omit: [""] }\n').pointers).toEqual([['MCPGEN_MANIFEST_INVALID', '/results/omit/0']]);
    expect(check('results: { projection: "yes" }\n').pointers).toEqual([['MCPGEN_MANIFEST_INVALID', '/results/projection']]);
    expect(check('results: { maxToken: 9000 }\n').pointers).toEqual([['MCPGEN_MANIFEST_UNKNOWN_KEY', '/results/maxToken']]);
    expect(check('overrides:\n  a: { results: { fields: true } }\n').pointers).toEqual([['MCPGEN_MANIFEST_UNKNOWN_KEY', '/overrides/a/results/fields']]);
    expect(check('overrides:\n  a: { results: { maxTokens: 0 } }\n').pointers).toEqual([['MCPGEN_MANIFEST_INVALID', '/overrides/a/results/maxTokens']]);
  });

  it('resolves the schema defaults, and values of the wrong type as absent', () => {
    expect(resolveResults(undefined)).toStrictEqual({
      maxTokens: 8000,
      compact: true,
      omit: ['*_url', 'url', 'node_id', '_links', 'gravatar_id'],
      maxStringChars: 1000,
      projection: false,
    });
    expect(resolveResults({ maxTokens: 'big', omit: [], projection: true })).toStrictEqual({
      maxTokens: 8000,
      compact: true,
      omit: [],
      maxStringChars: 1000,
      projection: true,
    });
  });
});

describe('compactJson', () => {
  it('drops nulls, empty values and omitted keys at any depth, keeps list positions, shortens long strings', () => {
    expect(compactJson(ISSUE, { omit: ['*_url', 'url', 'node_id', '_links', 'gravatar_id'], maxStringChars: 1000 })).toStrictEqual({
      number: 1347,
      title: 'Found a bug',
      state: 'open',
      user: { login: 'octocat', id: 1 },
      body: 'I am having a problem with this.',
      created_at: '2011-04-22T13:33:48Z',
    });
    expect(compactJson([{ a: null }, 1, [], { b: 'x'.repeat(70) }], { omit: [], maxStringChars: 64 })).toStrictEqual([
      null,
      1,
      null,
      { b: `${'x'.repeat(64)}…[+6 characters]` },
    ]);
    expect(compactJson({ a: [null, {}], b: { c: [] } }, { omit: [], maxStringChars: 64 })).toBeUndefined();
    // `*` is any run of characters, anchored at both ends; other characters are literal
    expect(compactJson({ html_url: 1, url: 2, urls: 3, 'a.b': 4, axb: 5 }, { omit: ['*url', 'a.b'], maxStringChars: 64 })).toStrictEqual({ urls: 3, axb: 5 });
  });
});

describe('results in the IR and the generated project', () => {
  it('puts the resolved policy into config.results, defaults applied', () => {
    const ir = build();
    expect(ir.results).toStrictEqual({ maxTokens: 8000, compact: true, omit: ['*_url', 'url', 'node_id', '_links', 'gravatar_id'], maxStringChars: 1000 });
    expect(serverConfig(ir).results).toStrictEqual(ir.results);
    expect(emitConfigFile(build({ results: { ...resolveResults(undefined), maxTokens: 12000, omit: ['etag'] } }))).toContain(
      '  "results": {\n    "maxTokens": 12000,\n    "compact": true,\n    "omit": [\n      "etag"\n    ],\n    "maxStringChars": 1000\n  }',
    );
  });

  it('gives a tool only the override keys that differ from the server policy', () => {
    const ir = build({
      overrides: {
        listIssues: { results: { maxTokens: 8000, omit: ['node_id'], compact: true } },
        listPulls: { results: { maxStringChars: 200, maxTokens: 3000 } },
        ping: { results: { projection: false } },
      },
    });
    expect(tool(ir, 'listIssues').results).toStrictEqual({ omit: ['node_id'] });
    expect(tool(ir, 'listPulls').results).toStrictEqual({ maxTokens: 3000, maxStringChars: 200 });
    expect(tool(ir, 'ping').results).toBeUndefined();
    expect(tool(ir, 'updatePull').results).toBeUndefined();
    const file = emitToolsFile(ir);
    expect(file).toContain('  "results": {"maxTokens":3000,"maxStringChars":200},\n');
    expect(file).toContain('  "results": {"omit":["node_id"]},\n');
  });

  it('calibrates bytesPerToken on the compacted examples, pooled, following $refs; none without usable examples', () => {
    const ir = build();
    expect(tool(ir, 'listIssues').bytesPerToken).toBe(expectedRatio([[ISSUE, ISSUE]]));
    expect(tool(ir, 'listPulls').bytesPerToken).toBe(expectedRatio([[PULL], [PULL, PULL]]));
    // 31 bytes compacted: too little to say anything
    expect(tool(ir, 'updatePull').bytesPerToken).toBeUndefined();
    for (const name of ['deletePull', 'getAvatar', 'ping']) expect(tool(ir, name).bytesPerToken).toBeUndefined();
    // the tool's own omit list is the one its examples are compacted with; without compaction, the raw JSON
    const own = build({ overrides: { listIssues: { results: { omit: [] } }, listPulls: { results: { compact: false } } } });
    expect(tool(own, 'listIssues').bytesPerToken).toBe(expectedRatio([[ISSUE, ISSUE]], []));
    const raw = JSON.stringify([PULL]) + JSON.stringify([PULL, PULL]);
    expect(tool(own, 'listPulls').bytesPerToken).toBe(
      Math.round((Buffer.byteLength(raw) / (countTokens(JSON.stringify([PULL])) + countTokens(JSON.stringify([PULL, PULL])))) * 100) / 100,
    );
    expect(emitToolsFile(ir)).toContain(`  "bytesPerToken": ${expectedRatio([[ISSUE, ISSUE]])}\n`);
  });

  it('reads Swagger 2 examples of a JSON response', () => {
    const spec = {
      swagger: '2.0',
      info: { title: 't', version: '1' },
      host: 'api.example.com',
      produces: ['application/json'],
      paths: {
        '/issues': {
          get: {
            operationId: 'listIssues',
            responses: { '200': { description: 'ok', schema: { type: 'array', items: { type: 'object' } }, examples: { 'application/json': [ISSUE, ISSUE] } } },
          },
        },
      },
    };
    expect(tool(build({}, spec, '2.0'), 'listIssues').bytesPerToken).toBe(expectedRatio([[ISSUE, ISSUE]]));
  });

  it('adds no projection argument unless asked', () => {
    const ir = build();
    for (const t of ir.tools) expect(t.projection).toBeUndefined();
    expect(emitProject(ir).get('package.json')).not.toContain('jmespath');
    expect(emitProject(ir).get('src/server.ts')).not.toContain('projection');
  });

  it('adds the projection argument to tools whose result can be JSON, named clear of their arguments', () => {
    const ir = build({ results: { ...resolveResults(undefined), projection: true } });
    expect(ir.tools.filter((t) => t.projection).map((t) => [t.name, t.projection!.arg])).toEqual([
      ['listIssues', 'result_fields'],
      ['listPulls', 'fields'],
      ['updatePull', 'result_fields_2'],
      // no 2xx described: the answer may be JSON
      ['ping', 'fields'],
    ]);
    const list = tool(ir, 'listPulls');
    expect(list.inputSchema).toStrictEqual({
      type: 'object',
      properties: { fields: { type: 'string', description: PROJECTION_DESCRIPTION } },
      additionalProperties: false,
    });
    // an argument of the model, never a parameter of the API
    expect(list.params).toEqual([]);
    expect(Object.keys(tool(ir, 'updatePull').inputSchema.properties as object)).toEqual(['n', 'fields', 'result_fields', 'result_fields_2']);
    expect(tool(ir, 'updatePull').inputSchema.required).toEqual(['n']);
    // argument validation (the published schema) accepts it, as a string
    const validate = new Ajv2020({ strict: false }).compile(list.inputSchema);
    expect(validate({ fields: '[].{number: number, title: title}' })).toBe(true);
    expect(validate({ fields: 7 })).toBe(false);
  });

  it('follows the override over the server setting, and names it clear of hidden arguments too', () => {
    const ir = build({
      results: { ...resolveResults(undefined), projection: true },
      overrides: {
        listPulls: { results: { projection: false } },
        updatePull: { arguments: { fields: { hidden: true, value: 'all' } } },
        deletePull: { results: { projection: true } },
      },
    });
    expect(tool(ir, 'listPulls').projection).toBeUndefined();
    expect(tool(ir, 'updatePull').projection).toEqual({ arg: 'result_fields_2' });
    // a 204 has no JSON to project
    expect(tool(ir, 'deletePull').projection).toBeUndefined();
    expect(
      build({ overrides: { listPulls: { results: { projection: true } } } })
        .tools.filter((t) => t.projection)
        .map((t) => t.name),
    ).toEqual(['listPulls']);
  });

  it('emits the argument, the tool setting, the import and the dependency', () => {
    const ir = build({ overrides: { listPulls: { results: { projection: true } } } });
    const files = emitProject(ir);
    const tools = files.get('src/tools.gen.ts')!;
    expect(tools).toContain('  "projection": {"arg":"fields"}\n');
    // the Args type has it: the model sends it
    expect(tools).toContain(`export type ListPullsArgs = {\n  /** ${PROJECTION_DESCRIPTION} */\n  fields?: string;\n};`);
    expect(files.get('src/server.ts')).toContain("import './runtime/operation/projection.js';\n");
    expect(files.has('src/runtime/operation/projection.ts')).toBe(true);
    expect(JSON.parse(files.get('package.json')!).dependencies['@jmespath-community/jmespath']).toBe('1.3.0');
  });

  it('is deterministic', () => {
    const manifest = { results: { ...resolveResults(undefined), projection: true }, overrides: { listIssues: { results: { maxTokens: 4000 } } } };
    const a = emitProject(build(manifest));
    const b = emitProject(build(manifest));
    expect([...a.keys()]).toEqual([...b.keys()]);
    for (const [path, text] of a) expect(b.get(path) === text, path).toBe(true);
  });

  it('names the projection argument fields, then result_fields, result_fields_2, …', () => {
    expect(projectionArgName(new Set())).toBe('fields');
    expect(projectionArgName(new Set(['fields']))).toBe('result_fields');
    expect(projectionArgName(new Set(['fields', 'result_fields', 'result_fields_2']))).toBe('result_fields_3');
  });
});
