/**
 * Every warning's help, followed, clears it: for each code in WARNING_CODES, a minimal manifest
 * and spec that trigger it, then the same project changed as the help says (where the help names
 * a value, the value is read from the help), and the warning must be gone with no error in its
 * place. The table is keyed by WarningCode, so a new warning code without a row fails here (and
 * in the type checker).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compile } from '../../src/compile.js';
import { CATALOG, type Diagnostic, WARNING_CODES, type WarningCode } from '../../src/core/diagnostics.js';

const MANIFEST = 'name: pets\nversion: 1.0.0\nopenapi: ./openapi.yaml\noutput: ./server\n';

const OPS = `paths:
  /pets:
    get:
      operationId: listPets
      tags: [pets]
      responses:
        '200':
          description: ok
          content:
            application/json:
              schema: { type: array, items: { $ref: '#/components/schemas/Pet' } }
  /pets/{petId}:
    delete:
      operationId: deletePet
      tags: [admin]
      parameters: [{ name: petId, in: path, required: true, schema: { type: string } }]
      responses: { '204': { description: gone } }
`;
const PET = `    Pet:
      type: object
      properties:
        id: { type: string }
        name: { type: string, description: The name of the pet as its owner calls it. }
        status: { type: string, enum: [available, pending, sold] }
        tags: { type: array, items: { type: object, properties: { id: { type: integer }, label: { type: string } } } }
`;
const SPEC = `openapi: 3.0.3\ninfo: { title: Pets, version: '1' }\nservers: [{ url: 'https://api.example.com' }]\n${OPS}components:\n  schemas:\n${PET}`;

/** A project: file path (relative to the project) ⇒ content. */
type Files = Record<string, string>;
/** How to trigger a warning, and the same project once its help has been followed. */
type Row = { files: Files; follow: (files: Files, warning: Diagnostic) => Files };

const base = (manifest = '', spec = SPEC): Files => ({ 'mcpgen.yaml': MANIFEST + manifest, 'openapi.yaml': spec });
const edit = (files: Files, file: string, from: string | RegExp, to: string): Files => {
  const text = files[file]!;
  const next = text.replace(from, () => to);
  if (next === text) throw new Error(`the fix of ${file} changed nothing (${String(from)})`);
  return { ...files, [file]: next };
};
/** The value the help suggests: `did you mean "x"?`. */
const meant = (d: Diagnostic): string => /did you mean "([^"]+)"\?/.exec(d.help)?.[1] ?? `(no suggestion in: ${d.help})`;

const nested = (levels: number): string => {
  let schema = '{ type: string }';
  for (let i = 0; i < levels; i++) schema = `{ type: object, properties: { a: ${schema} } }`;
  return schema;
};
const deepSpec = (levels: number) =>
  SPEC.replace(
    'paths:\n',
    `paths:\n  /nests:\n    post:\n      operationId: createNest\n      requestBody: { content: { application/json: { schema: ${nested(levels)} } } }\n      responses: { '204': { description: ok } }\n`,
  );
const openTool = `extraTools:
  - name: greet
    description: Greets someone.
    inputSchema: { type: object, properties: { who: { type: string } }, additionalProperties: true }
    handler: handlers/greet.ts#greet
`;

const ROWS: Record<WarningCode, Row> = {
  MCPGEN_MANIFEST_SYNTAX: {
    files: base('description: !note Pets of the store.\n'),
    follow: (f) => edit(f, 'mcpgen.yaml', 'description: !note Pets of the store.', 'description: "!note Pets of the store."'), // quote the value
  },
  MCPGEN_SPEC_SYNTAX: {
    files: base('', SPEC.replace('title: Pets', 'title: !t Pets')),
    follow: (f) => edit(f, 'openapi.yaml', 'title: !t Pets', 'title: Pets'), // remove the !tag
  },
  MCPGEN_UNMATCHED_PATH: {
    files: base('include:\n  - tag: pets\n  - path: /pets/{petId}/x\n'),
    follow: (f) => edit(f, 'mcpgen.yaml', '/pets/{petId}/x', '/pets/*'), // `*` matches within one segment
  },
  MCPGEN_NO_TOOLS: {
    files: base('exclude:\n  - tag: pets\n  - tag: admin\nprompts:\n  - name: hello\n    messages:\n      - text: Hello.\n'),
    follow: (f) => edit(f, 'mcpgen.yaml', '  - tag: pets\n', ''), // loosen exclude
  },
  MCPGEN_AUTH_FROM_CLIENT_AUTHORIZATION: {
    files: base(
      'auth:\n  token: { fromClient: Authorization }\n',
      SPEC.replace('components:\n', 'security: [{ token: [] }]\ncomponents:\n  securitySchemes:\n    token: { type: http, scheme: bearer }\n'),
    ),
    follow: (f) => edit(f, 'mcpgen.yaml', 'fromClient: Authorization', 'fromClient: X-Upstream-Authorization'),
  },
  MCPGEN_AUTH_UNSUPPORTED_SCHEME: {
    files: base(
      '',
      SPEC.replace(
        'components:\n',
        'security: [{ oidc: [] }]\ncomponents:\n  securitySchemes:\n    oidc: { type: openIdConnect, openIdConnectUrl: "https://id.example.com/.well-known/openid-configuration" }\n',
      ),
    ),
    // the help quotes the manifest entry to add, e.g. `auth: { oidc: { env: PETS_OIDC_TOKEN } }`
    follow: (f, d) => ({ ...f, 'mcpgen.yaml': `${f['mcpgen.yaml']}${/`(auth: \{.*\})`/.exec(d.help)?.[1] ?? '(no auth entry in the help)'}\n` }),
  },
  MCPGEN_SPEC_UNDEFINED_SECURITY_SCHEME: {
    files: base('', SPEC.replace('components:\n', 'security: [{ token: [] }]\ncomponents:\n')),
    follow: (f) => edit(f, 'openapi.yaml', 'components:\n', 'components:\n  securitySchemes:\n    token: { type: http, scheme: bearer }\n'), // define it
  },
  MCPGEN_SCOPE_MAP_UNKNOWN: {
    files: base(
      "scopeMap: { 'read:petz': pets.read }\n",
      SPEC.replace(
        'components:\n',
        "security: [{ oauth: ['read:pets'] }]\ncomponents:\n  securitySchemes:\n    oauth: { type: oauth2, flows: { authorizationCode: { authorizationUrl: 'https://a.example.com/a', tokenUrl: 'https://a.example.com/t', scopes: { 'read:pets': r } } } }\n",
      ),
    ),
    // the help names the nearest scope of the scheme
    follow: (f, d) => edit(f, 'mcpgen.yaml', 'read:petz', /did you mean "([^"]+)"/.exec(d.help)?.[1] ?? '(no scope in the help)'),
  },
  MCPGEN_NO_BASE_URL: {
    files: base('', SPEC.replace("servers: [{ url: 'https://api.example.com' }]\n", '')),
    follow: (f) => ({ ...f, 'mcpgen.yaml': `${f['mcpgen.yaml']}baseUrl: https://api.example.com\n` }),
  },
  MCPGEN_OUTPUT_SCHEMA_DROPPED: {
    files: base('outputSchemaMaxBytes: 100\n'),
    // the help says which value keeps every schema
    follow: (f, d) =>
      edit(
        f,
        'mcpgen.yaml',
        'outputSchemaMaxBytes: 100',
        `outputSchemaMaxBytes: ${/outputSchemaMaxBytes: (\d+)/.exec(d.help)?.[1] ?? '(no value in the help)'}`,
      ),
  },
  MCPGEN_PATTERN_DROPPED: {
    files: base(
      '',
      SPEC.replace('schema: { type: string } }]', () => "schema: { type: string, pattern: '^(?=p)[a-z0-9]+$' } }]"),
    ),
    follow: (f) => edit(f, 'openapi.yaml', '^(?=p)[a-z0-9]+$', '^p[a-z0-9]*$'), // without lookaround
  },
  MCPGEN_SCHEMA_TOO_DEEP: {
    files: base('', deepSpec(70)),
    follow: (f) => ({ ...f, 'openapi.yaml': deepSpec(20) }), // flatten the schema in the spec
  },
  MCPGEN_LARGE_SURFACE: {
    // the two tools' list is about 1 KB: over a quarter of 3,000 bytes
    files: base('budget:\n  maxListBytes: 3000\n'),
    follow: (f) => ({ ...f, 'mcpgen.yaml': `${f['mcpgen.yaml']}exclude:\n  - tag: admin\noutputSchemas: none\n` }),
  },
  MCPGEN_HANDLER_MISSING: {
    files: base(openTool),
    follow: (f) => ({ ...f, 'server/src/handlers/greet.ts': 'export async function greet() {\n  return { content: [] };\n}\n' }), // implement the stub
  },
  MCPGEN_HANDLER_RUNTIME_IMPORT: {
    files: {
      ...base(openTool),
      'server/src/handlers/greet.ts':
        "import type { ExtraToolContext } from '../runtime/extra-tools.js';\n\nexport async function greet(_args: unknown, _ctx: ExtraToolContext) {\n  return { content: [] };\n}\n",
    },
    // import from the path the help names
    follow: (f, d) =>
      edit(f, 'server/src/handlers/greet.ts', "'../runtime/extra-tools.js'", `'${/import from '([^']+)'/.exec(d.help)?.[1] ?? '(no path in the help)'}'`),
  },
  MCPGEN_PROMPT_UNKNOWN_VARIABLE: {
    files: base('prompts:\n  - name: hello\n    messages:\n      - text: Hello {{who}}.\n'),
    follow: (f) => edit(f, 'mcpgen.yaml', '  - name: hello\n', '  - name: hello\n    arguments: [{ name: who }]\n'), // declare it under arguments
  },
  MCPGEN_EXCLUDED_REFERENCES: {
    files: base('include:\n  - tag: pets\noverrides:\n  deletePet:\n    description: Removes a pet for good.\n'),
    follow: (f) => edit(f, 'mcpgen.yaml', 'include:\n  - tag: pets\n', ''), // widen include
  },
  MCPGEN_UNMAPPED_TOOL: {
    files: base(
      `${openTool}concerns:\n  - name: access\n    values: [read, write]\nconcernPresets:\n  read-only: { access: read }\nconcernMappings:\n  tools:\n    listPets: { access: read }\n    deletePet: { access: write }\n`,
    ),
    // the help's example keeps the tool in the preset; any value it gives is a mapping
    follow: (f, d) => ({ ...f, 'mcpgen.yaml': `${f['mcpgen.yaml']}    ${/e\.g\. `(greet: \{[^`]*\})`/.exec(d.help)?.[1] ?? '(no example in the help)'}\n` }),
  },
  MCPGEN_REFLECTION_NO_GATES: {
    files: base('reflection:\n  domains: [pets]\n'),
    follow: (f) => edit(f, 'mcpgen.yaml', 'reflection:\n  domains: [pets]\n', ''), // remove `reflection`
  },
  MCPGEN_REFLECTION_PROMPT_ARGUMENT: {
    files: {
      ...base(
        `${openTool}reflection:\n  gates:\n    greet:\n      domain: pets\n      prompt: justify_greeting\n      promptArgs: { whom: "{{whoo}}" }\n      template: Why greet {{whom}}?\n`,
      ),
      'server/src/handlers/greet.ts': 'export async function greet() {\n  return { content: [] };\n}\n',
    },
    follow: (f, d) => edit(f, 'mcpgen.yaml', '{{whoo}}', `{{${meant(d)}}}`),
  },
  MCPGEN_POLICY_UNMATCHED_SELECTOR: {
    files: base("policy:\n  access:\n    rules:\n      - clients: ['*']\n        deny: { names: [deletePets] }\n"),
    follow: (f, d) => edit(f, 'mcpgen.yaml', 'deletePets', meant(d)),
  },
  MCPGEN_POLICY_UNMATCHED_LIMIT: {
    files: base('policy:\n  limits:\n    tools:\n      listPet: { maxConcurrent: 2 }\n'),
    follow: (f, d) => edit(f, 'mcpgen.yaml', 'listPet:', `${meant(d)}:`),
  },
  MCPGEN_POLICY_NO_EFFECT: {
    files: base('policy:\n  access:\n    default: allow\n'),
    follow: (f) => edit(f, 'mcpgen.yaml', 'default: allow', 'default: deny'),
  },
  MCPGEN_ARGUMENT_RULE_UNMATCHED: {
    files: base('arguments:\n  - name: petid\n    description: The pet.\n'),
    follow: (f, d) => edit(f, 'mcpgen.yaml', 'name: petid', `name: ${meant(d)}`),
  },
};

const temps: string[] = [];
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

/** Compiles a project (model only, as `validate` does before the output folder) and returns its diagnostics. */
async function diagnose(files: Files): Promise<Diagnostic[]> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'mcpgen-help-'));
  temps.push(dir);
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), text);
  }
  const res = await compile({ manifestPath: path.join(dir, 'mcpgen.yaml'), cwd: dir, emit: false });
  return res.diagnostics.sorted();
}

const shown = (list: Diagnostic[]) => list.map((d) => `${d.severity} ${d.code} ${d.message} (help: ${d.help})`);

describe('every warning clears when its help is followed', () => {
  it('the table has a row for every warning code, and only warning codes are in it', () => {
    expect(Object.keys(ROWS).sort()).toEqual([...WARNING_CODES].sort());
    for (const code of WARNING_CODES) expect(Object.hasOwn(CATALOG, code)).toBe(true);
  });

  it('docs/diagnostics.md says "warning" in the Severity of exactly these codes', () => {
    const doc = readFileSync(new URL('../../docs/diagnostics.md', import.meta.url), 'utf8');
    const warnings = [...doc.matchAll(/^\| `(MCPGEN_[A-Z0-9_]+)` \| ([^|]+) \|/gm)].filter((m) => /warning/.test(m[2]!)).map((m) => m[1]);
    expect(warnings.sort()).toEqual([...WARNING_CODES].sort());
  });

  for (const code of WARNING_CODES) {
    it(code, async () => {
      const row = ROWS[code];
      const before = await diagnose(row.files);
      const warning = before.find((d) => d.code === code && d.severity === 'warning');
      expect(warning, shown(before).join('\n')).toBeDefined();
      const after = await diagnose(row.follow(row.files, warning!));
      expect(shown(after.filter((d) => d.code === code || d.severity === 'error'))).toEqual([]);
    });
  }
});

describe('MCPGEN_OUTPUT_SCHEMA_DROPPED', () => {
  const wide = `    Wide:\n      type: object\n      properties:\n${Array.from({ length: 60 }, (_, i) => `        property_number_${i}: { type: string }\n`).join('')}`;
  const spec = SPEC.replace("schema: { type: array, items: { $ref: '#/components/schemas/Pet' } }", "schema: { $ref: '#/components/schemas/Wide' }").replace(
    'components:\n  schemas:\n',
    `components:\n  schemas:\n${wide}`,
  );

  it('without outputSchemaMaxBytes in the manifest, points at the manifest file, not at a key it does not have', async () => {
    const list = await diagnose(base('', spec));
    const d = list.find((x) => x.code === 'MCPGEN_OUTPUT_SCHEMA_DROPPED')!;
    expect(d.location).toMatchObject({ pointer: '', line: 0, col: 0 });
    expect(d.location.file.endsWith('mcpgen.yaml')).toBe(true);
    expect(d.message).toBe('1 tool(s) publish no output schema because theirs is larger than outputSchemaMaxBytes 768: listPets');
    expect(d.help).toMatch(/^their results still come back as text; `outputSchemaMaxBytes: \d+` keeps its schema; /);
  });

  it('with outputSchemaMaxBytes written, points at that key', async () => {
    const list = await diagnose(base('description: Pets.\noutputSchemaMaxBytes: 300\n', spec));
    const d = list.find((x) => x.code === 'MCPGEN_OUTPUT_SCHEMA_DROPPED')!;
    expect(d.location).toMatchObject({ pointer: '/outputSchemaMaxBytes', line: 6, col: 1 });
  });
});
