/**
 * `mcpgen init`: the starter manifest of Petstore 3.0 in detail, a hostile spec whose text must
 * not escape its quotes, the refusal to overwrite, and every corpus spec: init, then validate
 * (the largest) or build (the others) the result. Slices (`--tag`, `--exclude-tag`, `--method`)
 * on Asana and Twilio, and a full starter trimmed by hand then cleaned by `mcpgen fix`.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { commentText, quoted } from '../../src/cli/init/starter.js';
import { serverDescription, serverName, serverVersion } from '../../src/cli/init.js';
import { main } from '../../src/cli/main.js';
import type { JsonReport } from '../../src/cli/report.js';
import { CORPUS_SPECS, corpusSpec, specSlug } from '../helpers/corpus.js';
import { ROOT } from '../helpers/project.js';

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
    for (const s of [
      'plain',
      'a\nb',
      'x: y # z',
      '"q"',
      'null',
      '1.0',
      '\u2028\u2029\u0085',
      '\u0007',
      "it's",
      `${'long text '.repeat(20)}\n\n# not a comment\nkey: value`,
    ]) {
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
    expect(text).toMatch(
      /^# include:\n#   - tag: "pet" +# 8 operations, [\d,]+ bytes\n#   - tag: "store" +# 4 operations, [\d,]+ bytes\n#   - tag: "user" +# 8 operations, [\d,]+ bytes$/m,
    );
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

  it("points $schema at something every machine has: mcpgen in the project's node_modules, else this version on the npm CDN", async () => {
    const spec = corpusSpec('petstore-3.0.json');
    const { version } = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };
    const schemaLine = (text: string) => text.split('\n')[0];
    // no mcpgen installed beside the project (a clone or a global install runs): the versioned URL, not a path into it
    const bare = tempDir();
    expect((await cli(['init', spec, '--out', 'api/mcpgen.yaml'], bare)).code).toBe(0);
    expect(schemaLine(readFileSync(path.join(bare, 'api/mcpgen.yaml'), 'utf8'))).toBe(
      `# yaml-language-server: $schema=https://unpkg.com/mcpgen@${version}/schemas/manifest.schema.json`,
    );
    // mcpgen as the project's dev dependency: its copy, relative to the manifest (found upwards)
    const project = tempDir();
    mkdirSync(path.join(project, 'node_modules/mcpgen/schemas'), { recursive: true });
    writeFileSync(path.join(project, 'node_modules/mcpgen/schemas/manifest.schema.json'), '{}');
    expect((await cli(['init', spec, '--out', 'api/mcpgen.yaml'], project)).code).toBe(0);
    expect(schemaLine(readFileSync(path.join(project, 'api/mcpgen.yaml'), 'utf8'))).toBe(
      '# yaml-language-server: $schema=../node_modules/mcpgen/schemas/manifest.schema.json',
    );
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
  it.each(CORPUS_SPECS.map((s) => [s]))(
    '%s: init, then validate or build the manifest',
    async (name) => {
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
    },
    180_000,
  );
});

/** operationId ⇒ tags of every operation in a corpus JSON spec. */
function operationTags(spec: string): Map<string, string[]> {
  const doc = JSON.parse(readFileSync(spec, 'utf8')) as { paths: Record<string, Record<string, { operationId?: string; tags?: string[] }>> };
  const out = new Map<string, string[]>();
  for (const item of Object.values(doc.paths))
    for (const op of Object.values(item)) if (typeof op === 'object' && op !== null && op.operationId) out.set(op.operationId, op.tags ?? []);
  return out;
}

const SLICES: Array<[string, [string, string]]> = [
  ['asana.json', ['Tasks', 'Projects']],
  ['twilio-api.json', ['Api20100401Call', 'Api20100401Message']],
];

describe('mcpgen init --tag: a starter for a slice', () => {
  it.each(SLICES)(
    '%s: init --tag X --tag Y, then build: no error, at most one warning, only the slice in the file',
    async (name, tags) => {
      const dir = tempDir();
      const spec = corpusSpec(name);
      const init = await cli(['init', spec, '--tag', tags[0], '--tag', tags[1]], dir);
      expect(init.code, init.stderr).toBe(0);
      const text = readFileSync(path.join(dir, 'mcpgen.yaml'), 'utf8');
      const m = parse(text) as { include: unknown; concernMappings: { tools: Record<string, unknown> } };
      expect(m.include).toEqual([{ tag: tags }]);
      // every mapped tool, and every tag and operation the comments name, is of the slice
      const byId = operationTags(spec);
      const mapped = Object.keys(m.concernMappings.tools);
      const inSlice = [...byId].filter(([, t]) => t.some((x) => tags.includes(x))).map(([id]) => id);
      expect(mapped.sort()).toEqual(inSlice.sort());
      const listedTags = [...text.matchAll(/^# {3}- tag: "([^"]+)"/gm)].map((x) => x[1]!);
      expect(listedTags.length).toBeGreaterThan(0);
      for (const t of listedTags)
        expect(
          inSlice.some((id) => byId.get(id)!.includes(t)),
          t,
        ).toBe(true);
      const example = /^# {3}"([^"]+)":$/m.exec(text)![1]!;
      expect(inSlice).toContain(example);
      expect(init.stdout).toContain(`${mapped.length} tools of ${byId.size} operations`);

      const built = await cli(['build', 'mcpgen.yaml', '--format', 'json'], dir);
      const doc = JSON.parse(built.stdout) as JsonReport;
      expect(built.code, JSON.stringify(doc.diagnostics)).toBe(0);
      expect(doc.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
      // at most one warning, and it says what it is about (Asana's slice: none; Twilio's: MCPGEN_OUTPUT_SCHEMA_DROPPED with the value that keeps the schemas)
      const warnings = doc.diagnostics.filter((d) => d.severity === 'warning');
      expect(warnings.length, JSON.stringify(warnings)).toBeLessThanOrEqual(1);
      for (const w of warnings) {
        expect(w.code).not.toMatch(/EXCLUDED|UNKNOWN/);
        expect(w.help).toMatch(/outputSchemaMaxBytes: \d+|diagnostics/);
      }
      expect(doc.summary!.operationTools).toBe(mapped.length);
      // the one warning of the starter's own making is explained in it, and its commented line silences it
      const dropped = warnings.some((w) => w.code === 'MCPGEN_OUTPUT_SCHEMA_DROPPED');
      expect(text.includes('so `mcpgen build` warns (MCPGEN_OUTPUT_SCHEMA_DROPPED;')).toBe(dropped);
      if (dropped) {
        writeFileSync(
          path.join(dir, 'mcpgen.yaml'),
          text.replace(/^# diagnostics: \{ MCPGEN_OUTPUT_SCHEMA_DROPPED: off \}$/m, 'diagnostics: { MCPGEN_OUTPUT_SCHEMA_DROPPED: off }'),
        );
        const clean = JSON.parse((await cli(['build', 'mcpgen.yaml', '--format', 'json'], dir)).stdout) as JsonReport;
        expect(clean.diagnostics).toEqual([]);
      }
    },
    120_000,
  );

  it.each(SLICES)(
    '%s: a full starter trimmed to two tags builds with one warning, and after mcpgen fix with none about mappings, comments kept',
    async (name, tags) => {
      const dir = tempDir();
      expect((await cli(['init', corpusSpec(name)], dir)).code).toBe(0);
      const file = path.join(dir, 'mcpgen.yaml');
      const full = readFileSync(file, 'utf8');
      // uncomment `include:` and two of its entries, as the comments say
      let trimmed = full.replace(/^# include:$/m, 'include:');
      for (const t of tags) trimmed = trimmed.replace(`#   - tag: ${JSON.stringify(t)} `, `  - tag: ${JSON.stringify(t)} `);
      expect(trimmed.match(/^ {2}- tag: /gm)).toHaveLength(2);
      writeFileSync(file, trimmed);

      const before = JSON.parse((await cli(['build', 'mcpgen.yaml', '--format', 'json'], dir)).stdout) as JsonReport;
      expect(before.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
      const stale = before.diagnostics.filter((d) => d.code === 'MCPGEN_EXCLUDED_REFERENCES');
      expect(stale).toHaveLength(1);
      const all = Object.keys((parse(full) as { concernMappings: { tools: object } }).concernMappings.tools).length;
      const left = all - before.summary!.operationTools;
      expect(stale[0]!.message).toMatch(new RegExp(`^${left} manifest entries name operations that include/exclude leave out`));
      expect(stale[0]!.help).toContain('mcpgen fix mcpgen.yaml');

      const fixed = await cli(['fix', 'mcpgen.yaml'], dir);
      expect(fixed.code, fixed.stderr).toBe(0);
      expect(fixed.stdout).toContain(`removed ${left} entries`);
      const after = readFileSync(file, 'utf8');
      // comments survive, and the file is the trimmed one less mapping lines only, in order
      expect(after).toContain('# Concerns let a client narrow the tools it sees');
      expect(after).toMatch(/^# {3}- tag: "[^"]+" +# \d+ operations?/m);
      const kept = after.split('\n');
      const keptSet = new Set(kept);
      const gone = trimmed.split('\n').filter((l) => !keptSet.has(l));
      expect(gone).toHaveLength(left);
      for (const l of gone) expect(l).toMatch(/^ {4}"[^"]+": \{ access: (read|write) \}$/);
      expect(trimmed.split('\n').filter((l) => !gone.includes(l))).toEqual(kept);

      const again = JSON.parse((await cli(['build', 'mcpgen.yaml', '--format', 'json'], dir)).stdout) as JsonReport;
      expect(again.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
      expect(again.diagnostics.filter((d) => /EXCLUDED|UNKNOWN_PRIMITIVE|CONCERN/.test(d.code))).toEqual([]);
      expect(again.summary!.operationTools).toBe(before.summary!.operationTools);
    },
    120_000,
  );

  it('combines --exclude-tag and --method as exclude and include selectors', async () => {
    const dir = tempDir();
    // each flag takes one value: one before the spec does not swallow it
    const spec = () => corpusSpec('petstore-3.0.json');
    const res = await cli(['init', '--method', 'GET', spec(), '--method', 'get', '--exclude-tag', 'user'], dir);
    expect(res.code, res.stderr).toBe(0);
    const text = readFileSync(path.join(dir, 'mcpgen.yaml'), 'utf8');
    expect(text).toContain('include:\n  - method: ["get"]\nexclude:\n  - tag: ["user"]\n');
    const m = parse(text) as { concernMappings: { tools: Record<string, { access: string }> } };
    // pet: findPetsByStatus, findPetsByTags, getPetById; store: getInventory, getOrderById
    expect(Object.keys(m.concernMappings.tools).sort()).toEqual(['findPetsByStatus', 'findPetsByTags', 'getInventory', 'getOrderById', 'getPetById']);
    expect(Object.values(m.concernMappings.tools).every((v) => v.access === 'read')).toBe(true);
    expect(text).not.toMatch(/"user"\s+#/);
    const built = await cli(['build', 'mcpgen.yaml', '--format', 'json'], dir);
    expect((JSON.parse(built.stdout) as JsonReport).summary!.operationTools).toBe(5);

    // a slice with no tool that only reads gets no read-only preset, which would list nothing
    const writes = await cli(['init', spec(), '--method', 'post', '--out', 'w.yaml'], dir);
    expect(writes.code, writes.stderr).toBe(0);
    const w = readFileSync(path.join(dir, 'w.yaml'), 'utf8');
    expect(Object.keys(parse(w) as object)).not.toContain('concernPresets');
    expect(w).toContain('# concernPresets: none suggested, as no tool only reads.\n');
  });

  it('refuses a tag or method the spec does not have, naming the closest, and an empty slice; nothing written', async () => {
    const dir = tempDir();
    const spec = corpusSpec('petstore-3.0.json');
    const res = await cli(['init', spec, '--tag', 'pets', '--tag', 'Store', '--exclude-tag', 'nobody', '--method', 'GTE'], dir);
    expect(res.code).toBe(1);
    expect(res.stderr).toBe(
      '--tag error "pets" is not a tag of any operation in the spec\n  help: did you mean "pet"? (tags are matched exactly, case included)\n' +
        '--tag error "Store" is not a tag of any operation in the spec\n  help: did you mean "store"? (tags are matched exactly, case included)\n' +
        '--exclude-tag error "nobody" is not a tag of any operation in the spec\n  help: the spec\'s tags: "pet", "store", "user"\n' +
        '--method error "GTE" is not an HTTP method\n  help: did you mean GET?\n' +
        'mcpgen init: nothing written.\n',
    );
    const empty = await cli(['init', spec, '--tag', 'store', '--method', 'patch'], dir);
    expect(empty.code).toBe(1);
    expect(empty.stderr).toMatch(/^--tag store --method PATCH error the slice selects none of the spec's 20 operations\n/);
    expect(existsSync(path.join(dir, 'mcpgen.yaml'))).toBe(false);
    // several close tags are all named
    const asana = await cli(['init', corpusSpec('asana.json'), '--tag', 'task'], dir);
    expect(asana.stderr).toContain('help: did you mean "Tasks", "Tags" or "User task lists"? (tags are matched exactly, case included)');
  });
});
