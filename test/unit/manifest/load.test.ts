import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { Diagnostics } from '../../../src/core/diagnostics.js';
import { deriveEnvPrefix, type LoadedManifest, loadManifest, resolveManifest } from '../../../src/manifest/load.js';

let tmp: string;

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'mcpgen-manifest-'));
  await mkdir(path.join(tmp, 'api'), { recursive: true });
});

afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

async function write(rel: string, text: string): Promise<void> {
  await writeFile(path.join(tmp, rel), text);
}

async function load(rel: string, cwd = tmp): Promise<{ loaded: LoadedManifest | undefined; diagnostics: Diagnostics }> {
  const diagnostics = new Diagnostics();
  return { loaded: await loadManifest(rel, diagnostics, { cwd }), diagnostics };
}

describe('loadManifest', () => {
  test('a missing file', async () => {
    const { loaded, diagnostics } = await load('api/nope.yaml');
    expect(loaded).toBeUndefined();
    expect(diagnostics.items).toStrictEqual([
      {
        code: 'MCPGEN_MANIFEST_NOT_FOUND',
        severity: 'error',
        message: 'manifest api/nope.yaml not found',
        help: 'check the path; the manifest is usually named mcpgen.yaml',
        location: { file: 'api/nope.yaml', pointer: '', line: 0, col: 0 },
      },
    ]);
  });

  test('a directory instead of a file', async () => {
    const { loaded, diagnostics } = await load('api');
    expect(loaded).toBeUndefined();
    expect(diagnostics.items.map((d) => [d.code, d.message, d.location.line])).toStrictEqual([
      ['MCPGEN_MANIFEST_NOT_FOUND', 'api is a directory, not a manifest file', 0],
    ]);
  });

  test('a valid manifest: dir, displayPath and value', async () => {
    await write('api/mcpgen.yaml', 'name: petstore\nopenapi: ./petstore.yaml\n');
    const { loaded, diagnostics } = await load('api/mcpgen.yaml');
    expect(diagnostics.items).toStrictEqual([]);
    expect(loaded?.valid).toBe(true);
    expect(loaded?.dir).toBe(path.join(tmp, 'api'));
    expect(loaded?.displayPath).toBe('api/mcpgen.yaml');
    expect(loaded?.source.file).toBe('api/mcpgen.yaml');
    expect(loaded?.manifest).toStrictEqual({ name: 'petstore', openapi: './petstore.yaml' });
  });

  test('display paths are relative to cwd, with / separators, also from a subdirectory', async () => {
    await write('mcpgen.yaml', 'name: petstore\nopenapi: x\nbad: 1\n');
    const { loaded, diagnostics } = await load(path.join(tmp, 'mcpgen.yaml'), path.join(tmp, 'api'));
    expect(loaded?.displayPath).toBe('../mcpgen.yaml');
    expect(loaded?.valid).toBe(false);
    expect(diagnostics.items.map((d) => d.location)).toStrictEqual([{ file: '../mcpgen.yaml', pointer: '/bad', line: 3, col: 1 }]);
  });

  test('an invalid manifest still loads (valid: false); a non-mapping becomes {}', async () => {
    await write('list.yaml', '- a\n- b\n');
    const { loaded } = await load('list.yaml');
    expect(loaded?.valid).toBe(false);
    expect(loaded?.manifest).toStrictEqual({});
  });

  test('syntax errors give undefined', async () => {
    await write('broken.yaml', 'name: a\n  openapi: b\n');
    const { loaded, diagnostics } = await load('broken.yaml');
    expect(loaded).toBeUndefined();
    expect(diagnostics.items.every((d) => d.code === 'MCPGEN_MANIFEST_SYNTAX' && d.location.file === 'broken.yaml')).toBe(true);
    expect(diagnostics.items.length).toBeGreaterThan(0);
  });
});

describe('resolveManifest', () => {
  const loaded = (manifest: Record<string, unknown>): LoadedManifest => ({
    source: { file: 'm.yaml', text: '', value: manifest, locate: (pointer) => ({ file: 'm.yaml', pointer, line: 0, col: 0 }) },
    manifest: manifest as LoadedManifest['manifest'],
    valid: true,
    dir: path.join(path.sep, 'work', 'proj'),
    displayPath: 'm.yaml',
  });

  test('schema defaults and absolute paths', () => {
    expect(resolveManifest(loaded({ name: 'pet-store.v2', openapi: 'specs/openapi.json' }))).toStrictEqual({
      name: 'pet-store.v2',
      version: '0.1.0',
      openapi: 'specs/openapi.json',
      openapiPath: path.join(path.sep, 'work', 'proj', 'specs', 'openapi.json'),
      output: './server',
      outputDir: path.join(path.sep, 'work', 'proj', 'server'),
      envPrefix: 'PET_STORE_V2',
      allowRemoteRefs: [],
      maxToolNameLength: 64,
      maxDescriptionLength: 1024,
      timeoutMs: 30000,
      maxResponseBytes: 1000000,
      maxInFlightBytes: 67108864,
      outputSchemas: 'lenient',
      outputSchemaDepth: 2,
      outputSchemaMaxBytes: 768,
      inputSchemaMaxBytes: 4096,
      maxArgumentDescriptionLength: 160,
      budget: { maxListBytes: 10485760 },
      results: { maxTokens: 8000, compact: true, omit: ['*_url', 'url', 'node_id', '_links', 'gravatar_id'], maxStringChars: 1000, projection: false },
      package: { private: false },
      dir: path.join(path.sep, 'work', 'proj'),
      exposeInMeta: false,
      enforce: false,
      discovery: 'list',
    });
  });

  test('given values win; selector fields become lists', () => {
    const r = resolveManifest(
      loaded({
        name: 'x',
        openapi: '../api.yaml',
        version: '2.0.0',
        description: 'd',
        output: 'out/gen',
        baseUrl: 'https://api.example.com',
        envPrefix: 'PETS',
        allowRemoteRefs: ['https://a/'],
        maxToolNameLength: 40,
        timeoutMs: 1000,
        maxResponseBytes: 2048,
        maxInFlightBytes: 4096,
        outputSchemas: 'strict',
        outputSchemaDepth: 3,
        outputSchemaMaxBytes: 100,
        inputSchemaMaxBytes: 2000,
        maxArgumentDescriptionLength: 50,
        budget: { maxListBytes: 5000, maxTools: 3, maxTokens: 4000 },
        results: { maxTokens: 4000, omit: [], projection: true },
        package: { private: true, author: 'A. Maintainer', license: 'MIT', repository: 'https://example.com/x.git' },
        include: [
          { tag: 'pets', method: ['get', 'post'] },
          { operationId: ['a', 'b'], path: '/store/*', method: 'delete' },
        ],
        exclude: [{ tag: ['internal'] }],
        overrides: { listPets: { name: 'list' } },
        prompts: [{ name: 'p', messages: [{ text: 't' }] }, 'not an object'],
        concerns: [{ name: 'risk', values: ['low'] }],
        concernMappings: { tools: { list: { risk: 'low' } } },
        exposeInMeta: true,
      }),
    );
    expect(r).toStrictEqual({
      name: 'x',
      version: '2.0.0',
      description: 'd',
      openapi: '../api.yaml',
      openapiPath: path.join(path.sep, 'work', 'api.yaml'),
      output: 'out/gen',
      outputDir: path.join(path.sep, 'work', 'proj', 'out', 'gen'),
      baseUrl: 'https://api.example.com',
      envPrefix: 'PETS',
      allowRemoteRefs: ['https://a/'],
      maxToolNameLength: 40,
      timeoutMs: 1000,
      maxResponseBytes: 2048,
      maxInFlightBytes: 4096,
      maxDescriptionLength: 1024,
      outputSchemas: 'strict',
      outputSchemaDepth: 3,
      outputSchemaMaxBytes: 100,
      inputSchemaMaxBytes: 2000,
      maxArgumentDescriptionLength: 50,
      budget: { maxListBytes: 5000, maxTools: 3, maxTokens: 4000 },
      results: { maxTokens: 4000, compact: true, omit: [], maxStringChars: 1000, projection: true },
      package: { private: true, author: 'A. Maintainer', license: 'MIT', repository: 'https://example.com/x.git' },
      include: [
        { tag: 'pets', method: ['get', 'post'] },
        { operationId: ['a', 'b'], path: '/store/*', method: 'delete' },
      ],
      exclude: [{ tag: ['internal'] }],
      overrides: { listPets: { name: 'list' } },
      dir: path.join(path.sep, 'work', 'proj'),
      prompts: [{ name: 'p', messages: [{ text: 't' }] }],
      concerns: [{ name: 'risk', values: ['low'] }],
      concernMappings: { tools: { list: { risk: 'low' } } },
      exposeInMeta: true,
      enforce: false,
      discovery: 'list',
    });
  });

  test('fields of the wrong type (an invalid manifest) fall back to defaults instead of throwing', () => {
    const r = resolveManifest(loaded({ name: 7, openapi: 'a.yaml', maxToolNameLength: 'abc', include: 'pets', output: 3 }));
    expect(r.maxToolNameLength).toBe(64);
    expect(r.output).toBe('./server');
    expect(r.include).toBeUndefined();
    expect(r.envPrefix).toBe('MCP');
  });

  test('deriveEnvPrefix', () => {
    expect(deriveEnvPrefix('petstore')).toBe('PETSTORE');
    expect(deriveEnvPrefix('pet-store.v2_beta')).toBe('PET_STORE_V2_BETA');
    expect(deriveEnvPrefix('123abc')).toBe('MCP_123ABC');
    expect(deriveEnvPrefix('9')).toBe('MCP_9');
  });
});
