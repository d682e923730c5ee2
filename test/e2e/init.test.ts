/**
 * `mcpgen init`: the starter manifest of Petstore 3.0 in detail, a hostile spec whose text must
 * not escape its quotes, the refusal to overwrite, and every corpus spec: init, then validate
 * (the largest) or build (the others) the result.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { serverDescription, serverName, serverVersion } from '../../src/cli/init.js';
import { main } from '../../src/cli/main.js';
import type { JsonReport } from '../../src/cli/report.js';
import { commentText, quoted } from '../../src/init/starter.js';
import { CORPUS_SPECS, corpusSpec, specSlug } from '../helpers/corpus.js';

const temps: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(path.join(os.tmpdir(), 'mcpgen-init-test-'));
  temps.push(d);
  return d;
};
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

/** Runs the CLI in-process in `cwd`. */
async function cli(args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await main(args, { stdout: (s) => void (stdout += s), stderr: (s) => void (stderr += s), cwd });
  return { code, stdout, stderr };
}

describe('helpers', () => {
  it('names, versions and descriptions from info', () => {
    expect(serverName("GitHub's official OpenAPI spec + Octokit extension", 'x.json')).toBe('github');
    expect(serverName('Swagger Petstore - OpenAPI 3.0', 'x.json')).toBe('petstore');
    expect(serverName('Train Travel API', 'x.json')).toBe('train-travel');
    expect(serverName('API', 'x.json')).toBe('api');
    expect(serverName(undefined, '/a/My Spec.yaml')).toBe('my-spec');
    expect(serverName('!!!', '/a/___.yaml')).toBe('api');
    expect(serverVersion('1.0')).toBe('1.0.0');
    expect(serverVersion('v2')).toBe('2.0.0');
    expect(serverVersion('2022-11-28')).toBe('2022.11.28');
    expect(serverVersion('unversioned')).toBe('0.1.0');
    expect(serverVersion('1.2.3-beta.1')).toBe('1.2.3-beta.1');
    expect(serverDescription({ description: 'First [paragraph](http://x) here.\n\nSecond.' })).toBe('First paragraph here.');
    expect(serverDescription({ summary: 'Short.', description: 'Long.' })).toBe('Short.');
    expect(serverDescription({})).toBeUndefined();
    expect(serverDescription({ description: 'word '.repeat(100) })!.length).toBeLessThanOrEqual(301);
  });

  it('quotes any text as one double-quoted YAML line, and flattens comment text', () => {
    for (const s of ['plain', 'a\nb', 'x: y # z', '"q"', 'null', '1.0', '\u2028\u2029\u0085', '\u0007', "it's", `${'long text '.repeat(20)}\n\n# not a comment\nkey: value`]) {
      const q = quoted(s);
      expect(q).not.toMatch(/[\n\r\u2028\u2029\u0085]/);
      expect(parse(`k: ${q}`)).toEqual({ k: s });
    }
    expect(commentText('a\n# b\r\nc\u2028d')).toBe('a # b c d');
  });
});

describe('mcpgen init', () => {
  it('writes a commented starter manifest for Petstore 3.0 that validates and builds', async () => {
    const dir = tempDir();
    const spec = corpusSpec('petstore-3.0.json');
    const res = await cli(['init', spec, '--out', 'api/mcpgen.yaml'], dir);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/Wrote api\/mcpgen\.yaml for "Swagger Petstore" .*: 20 tools, tools\/list [\d,]+ bytes, 2 security scheme\(s\) mapped/);
    const text = readFileSync(path.join(dir, 'api/mcpgen.yaml'), 'utf8');
    const m = parse(text) as Record<string, unknown>;
    expect(Object.keys(m)).toEqual(['name', 'version', 'description', 'openapi', 'output', 'auth', 'concerns', 'concernPresets', 'concernMappings']);
    expect(m).toMatchObject({ name: 'petstore', version: '1.0.0', output: './server' });
    expect(m.description).toMatch(/^This is a sample server Petstore server\./);
    // the spec path is relative to the manifest
    expect(path.resolve(dir, 'api', m.openapi as string)).toBe(spec);
    // every scheme, with the variables the server reads by default
    expect(m.auth).toEqual({ petstore_auth: { env: 'PETSTORE_PETSTORE_AUTH_TOKEN' }, api_key: { env: 'PETSTORE_API_KEY_API_KEY' } });
    expect(text).toMatch(/"api_key": \{ env: "PETSTORE_API_KEY_API_KEY" \} +# API key in header "api_key"/);
    expect(text).toMatch(/"petstore_auth": .*# oauth2 \(implicit\): sent as a static bearer token/);
    // tags as commented include entries with their operation counts
    expect(text).toMatch(/^# include:\n#   - tag: "pet" +# 8 operations, [\d,]+ bytes\n#   - tag: "store" +# 4 operations, [\d,]+ bytes\n#   - tag: "user" +# 8 operations, [\d,]+ bytes$/m);
    // concerns: read or write by method, for every tool
    expect(m.concerns).toEqual([{ name: 'access', description: expect.any(String), values: ['read', 'write'] }]);
    const tools = (m.concernMappings as { tools: Record<string, { access: string }> }).tools;
    expect(Object.keys(tools)).toHaveLength(20);
    expect(tools.getPetById).toEqual({ access: 'read' });
    expect(tools.deletePet).toEqual({ access: 'write' });
    expect(tools.addPet).toEqual({ access: 'write' });

    // the surface in the comment is what a build of the manifest measures
    const built = await cli(['build', 'api/mcpgen.yaml', '--format', 'json'], dir);
    expect(built.code, built.stdout).toBe(0);
    const summary = (JSON.parse(built.stdout) as JsonReport).summary!;
    expect(text).toContain(`#   20 tools; tools/list is ${summary.listBytes!.toLocaleString('en-US')} bytes`);
    expect(summary).toMatchObject({ tools: 20, concerns: 1 });

    // never over an existing file
    const before = readFileSync(path.join(dir, 'api/mcpgen.yaml'), 'utf8');
    const again = await cli(['init', spec, '--out', 'api/mcpgen.yaml'], dir);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^api\/mcpgen\.yaml error api\/mcpgen\.yaml already exists\n  help: mcpgen init never overwrites a file/);
    expect(readFileSync(path.join(dir, 'api/mcpgen.yaml'), 'utf8')).toBe(before);
  });

  it('refuses a spec it cannot read, writing nothing', async () => {
    const dir = tempDir();
    const res = await cli(['init', 'missing.yaml'], dir);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/MCPGEN_SPEC_NOT_FOUND/);
    expect(existsSync(path.join(dir, 'mcpgen.yaml'))).toBe(false);
  });

  it('writes a manifest for a spec without operations (which then has nothing to build)', async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, 'empty.yaml'), 'openapi: 3.1.0\ninfo: { title: Empty, version: "1" }\npaths: {}\n');
    const res = await cli(['init', 'empty.yaml'], dir);
    expect(res.code, res.stderr).toBe(0);
    const m = parse(readFileSync(path.join(dir, 'mcpgen.yaml'), 'utf8')) as Record<string, unknown>;
    expect(Object.keys(m)).toEqual(['name', 'version', 'openapi', 'output']);
    const v = await cli(['validate', 'mcpgen.yaml', '--format', 'json'], dir);
    expect((JSON.parse(v.stdout) as JsonReport).diagnostics.filter((d) => d.severity === 'error').map((d) => d.code)).toEqual(['MCPGEN_NO_TOOLS']);
  });

  it('keeps hostile spec text inside its quotes and comments', async () => {
    const dir = tempDir();
    const evil = 'x"\n# injected\nenforce: true\n\u2028baseUrl: http://evil #';
    const spec = {
      openapi: '3.0.3',
      info: { title: `Evil ${evil}`, version: `1 ${evil}`, description: `Hello ${evil}` },
      servers: [{ url: 'https://api.example.com' }],
      components: { securitySchemes: { [`key ${evil}`]: { type: 'apiKey', in: 'header', name: `X-Key ${evil}` } } },
      security: [{ [`key ${evil}`]: [] }],
      paths: {
        '/things': {
          get: { operationId: 'listThings', tags: [`tag ${evil}`], responses: { '200': { description: 'ok' } } },
          post: { operationId: 'makeThing', tags: [`tag ${evil}`, 'plain'], responses: { '201': { description: 'ok' } } },
        },
      },
    };
    writeFileSync(path.join(dir, 'spec.json'), JSON.stringify(spec));
    const res = await cli(['init', 'spec.json'], dir);
    expect(res.code, res.stderr).toBe(0);
    const text = readFileSync(path.join(dir, 'mcpgen.yaml'), 'utf8');
    const m = parse(text) as Record<string, unknown>;
    expect(Object.keys(m)).toEqual(['name', 'version', 'description', 'openapi', 'output', 'auth', 'concerns', 'concernPresets', 'concernMappings']);
    expect(m.name).toBe('evil-x-injected-enforce');
    expect(m.version).toBe('1.0.0');
    expect(m.auth).toEqual({ [`key ${evil}`]: { env: expect.stringMatching(/^EVIL_X_INJECTED_ENFORCE_KEY_X_/) } });
    expect(m.description).toBe(commentText(`Hello ${evil}`, 10_000));
    for (const line of text.split('\n')) expect(line.startsWith('#') || line === '' || /^[a-zA-Z ]|^ {2,}/.test(line), line).toBe(true);
    expect(text).not.toMatch(/^enforce:/m);
    expect(text).not.toMatch(/^baseUrl:/m);
    expect((await cli(['validate', 'mcpgen.yaml'], dir)).code).toBe(0);
  });
});

describe('mcpgen init on every corpus spec', () => {
  // the largest are validated (every check, nothing written); the others are built
  const VALIDATE_ONLY = new Set(['github-rest.json', 'kubernetes.json']);
  it.each(CORPUS_SPECS.map((s) => [s]))('%s: init, then validate or build the manifest', async (name) => {
    const dir = tempDir();
    const out = `${specSlug(name)}/mcpgen.yaml`;
    const init = await cli(['init', corpusSpec(name), '--out', out], dir);
    expect(init.code, init.stderr).toBe(0);
    const text = readFileSync(path.join(dir, out), 'utf8');
    expect(text).toMatch(/^# Tool surface of the whole spec/m);
    const m = parse(text) as { name: string; concernMappings: { tools: Record<string, unknown> } };
    const cmd = VALIDATE_ONLY.has(name) ? 'validate' : 'build';
    const res = await cli([cmd, out, '--format', 'json'], dir);
    const doc = JSON.parse(res.stdout) as JsonReport;
    expect(res.code, JSON.stringify(doc.diagnostics.filter((d) => d.severity === 'error'))).toBe(0);
    expect(doc.summary!.name).toBe(m.name);
    expect(doc.summary!.operationTools).toBe(Object.keys(m.concernMappings.tools).length);
    expect(text).toContain(`tools/list is ${doc.summary!.listBytes!.toLocaleString('en-US')} bytes`);
    if (cmd === 'build') expect(existsSync(path.join(dir, specSlug(name), 'server/src/tools.gen.ts'))).toBe(true);
  }, 180_000);
});
