/**
 * The policy layer at build time (manifest `policy` → IR → `src/policy.gen.ts`): access rules
 * resolved to exact primitive sets for every selector kind (names and globs over final names,
 * tags, concerns failing closed, annotations, kinds), allow and deny in one rule, limits per
 * resolved tool, located diagnostics for every check, the emitted file and determinism.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { transformSync } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { compile } from '../../src/compile.js';
import { CATALOG } from '../../src/core/diagnostics.js';
import { effectiveAnnotations } from '../../src/ir/features/policy.js';
import type { AccessRule } from '../../templates/runtime/policy/policy-types.js';

const FIXTURE = new URL('../fixtures/policy/', import.meta.url);
const BASE = readFileSync(new URL('base.yaml', FIXTURE), 'utf8');
/** Lines of base.yaml: the policy's first line is line BASE_LINES + 1. */
const BASE_LINES = BASE.split('\n').length - 1;

function project(extra: string, base = BASE): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'mcpgen-policy-'));
  copyFileSync(new URL('openapi.yaml', FIXTURE), path.join(dir, 'openapi.yaml'));
  mkdirSync(path.join(dir, 'server/src/handlers'), { recursive: true });
  copyFileSync(new URL('handlers.ts', FIXTURE), path.join(dir, 'server/src/handlers/h.ts'));
  writeFileSync(path.join(dir, 'mcpgen.yaml'), base + extra);
  return dir;
}

async function build(extra: string, opts: { emit?: boolean; base?: string } = {}) {
  const dir = project(extra, opts.base);
  const res = await compile({ manifestPath: 'mcpgen.yaml', cwd: dir, emit: opts.emit ?? false });
  const diagnostics = res.diagnostics.sorted().map((d) => ({
    code: d.code,
    severity: d.severity,
    message: d.message,
    help: d.help,
    at: `${d.location.file}:${d.location.line - BASE_LINES}:${d.location.col} ${d.location.pointer}`,
  }));
  return { res, diagnostics, policy: res.ir?.policy };
}

/** A rule without its source, for compact expectations. */
const sets = (r: AccessRule) => ({
  effect: r.effect,
  clients: r.clients,
  tools: r.tools,
  prompts: r.prompts,
  resources: r.resources,
  resourceTemplates: r.resourceTemplates,
});
const none = { tools: [], prompts: [], resources: [], resourceTemplates: [] };

describe('policy access rules: resolution over the served primitives', () => {
  it('builds the fixture cleanly without a policy, and leaves the IR without one', async () => {
    const { res, diagnostics } = await build('');
    expect(diagnostics).toEqual([]);
    expect(res.ir!.policy).toBeUndefined();
    expect(res.ir!.tools.map((t) => t.name)).toEqual(['listPets', 'createPet', 'pet_get', 'deletePet', 'getOrder', 'order_remove']);
  });

  it('names: exact names and globs over final (renamed) tool names, prompt names, URIs and URI templates', async () => {
    const { diagnostics, policy } = await build(`policy:
  access:
    default: deny
    rules:
      - clients: [reader]
        allow: { names: ['*_get', 'get*', adoption_fee, adopt, 'petstore://docs/*', 'petstore://species/{species}'] }
      - clients: [ops]
        allow: { names: 'order_*' }
`);
    expect(diagnostics).toEqual([]);
    expect(policy!.access!.default).toBe('deny');
    expect(policy!.access!.rules.map(sets)).toEqual([
      // getPetById was renamed pet_get: `get*` matches getOrder only, `*_get` the renamed tool
      {
        effect: 'allow',
        clients: ['reader'],
        tools: ['adoption_fee', 'getOrder', 'pet_get'],
        prompts: ['adopt'],
        resources: ['petstore://docs/faq', 'petstore://docs/handbook'],
        resourceTemplates: ['petstore://species/{species}'],
      },
      { effect: 'allow', clients: ['ops'], ...none, tools: ['order_remove'] },
    ]);
    expect(policy!.access!.rules.map((r) => r.source)).toEqual(['policy.access.rules[0].allow', 'policy.access.rules[1].allow']);
  });

  it('tags: operation tools with one of the tags (extra tools have none)', async () => {
    const { diagnostics, policy } = await build(`policy:
  access:
    rules:
      - clients: ['*']
        deny: { tags: store }
      - clients: [a]
        allow: { tags: [pets, store], names: 'delete*' }
`);
    expect(diagnostics).toEqual([]);
    expect(policy!.access!.rules.map(sets)).toEqual([
      { effect: 'deny', clients: ['*'], ...none, tools: ['getOrder', 'order_remove'] },
      { effect: 'allow', clients: ['a'], ...none, tools: ['deletePet'] },
    ]);
  });

  it('concerns fail closed: a primitive without a mapping for the concern never matches', async () => {
    const { diagnostics, policy } = await build(`policy:
  access:
    rules:
      - clients: [reader]
        allow: { concerns: { risk: low } }
      - clients: [reader]
        deny: { concerns: { risk: [high] } }
      - clients: [front]
        allow: { concerns: { audience: customer, risk: low } }
`);
    // rule 2: adoption_fee has audience but no risk mapping, listPets risk but no audience: nothing
    expect(diagnostics.map((d) => [d.code, d.severity, d.at])).toEqual([
      ['MCPGEN_POLICY_UNMATCHED_SELECTOR', 'warning', 'mcpgen.yaml:9:16 /policy/access/rules/2/allow'],
    ]);
    expect(policy!.access!.rules.map(sets)).toEqual([
      // createPet, getOrder, order_remove, adoption_fee, the faq and the template are unmapped: not allowed by a risk rule
      { effect: 'allow', clients: ['reader'], ...none, tools: ['listPets', 'pet_get'], prompts: ['adopt'], resources: ['petstore://docs/handbook'] },
      { effect: 'deny', clients: ['reader'], ...none, tools: ['deletePet', 'pet_get'] },
      { effect: 'allow', clients: ['front'], ...none },
    ]);
  });

  it('annotations: tools whose hints equal the booleans, absent hints taking their MCP defaults; never prompts or resources', async () => {
    const { diagnostics, policy } = await build(`policy:
  access:
    rules:
      - clients: [reader]
        allow: { annotations: { readOnlyHint: true } }
      - clients: [reader]
        deny: { annotations: { destructiveHint: true } }
      - clients: [reader]
        allow: { annotations: { readOnlyHint: false, idempotentHint: false } }
`);
    expect(diagnostics).toEqual([]);
    expect(policy!.access!.rules.map((r) => r.tools)).toEqual([
      ['adoption_fee', 'getOrder', 'listPets', 'pet_get'],
      // DELETE ⇒ destructiveHint; POST has no hint, and a tool that is not read-only defaults to destructive
      ['createPet', 'deletePet', 'order_remove'],
      ['createPet', 'deletePet', 'order_remove'],
    ]);
    expect(policy!.access!.rules.every((r) => r.prompts.length + r.resources.length + r.resourceTemplates.length === 0)).toBe(true);
    expect(effectiveAnnotations({})).toEqual({ readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true });
    expect(effectiveAnnotations({ readOnlyHint: true })).toEqual({ readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true });
  });

  it('a rule with allow and deny gives two resolved rules; kinds restrict a selector; `{}` matches everything', async () => {
    const { diagnostics, policy } = await build(`policy:
  access:
    default: deny
    rules:
      - clients: [ops, admin, ops]
        allow: { tags: [pets], names: ['get*', 'list*', adoption_fee], concerns: { risk: low } }
        deny: { names: [deletePet] }
      - clients: [admin]
        allow: {}
      - clients: [docs]
        allow: { kinds: [resources, resourceTemplates], names: 'petstore://**' }
      - clients: [docs]
        deny: { kinds: [prompts], names: '*' }
`);
    expect(diagnostics).toEqual([]);
    const rules = policy!.access!.rules;
    expect(rules.map((r) => r.source)).toEqual([
      'policy.access.rules[0].allow',
      'policy.access.rules[0].deny',
      'policy.access.rules[1].allow',
      'policy.access.rules[2].allow',
      'policy.access.rules[3].deny',
    ]);
    expect(rules.map(sets)).toEqual([
      // names AND tags AND concerns: adoption_fee has no tag, getOrder is tagged store
      { effect: 'allow', clients: ['admin', 'ops'], ...none, tools: ['listPets'] },
      { effect: 'deny', clients: ['admin', 'ops'], ...none, tools: ['deletePet'] },
      {
        effect: 'allow',
        clients: ['admin'],
        tools: ['adoption_fee', 'createPet', 'deletePet', 'getOrder', 'listPets', 'order_remove', 'pet_get'],
        prompts: ['adopt'],
        resources: ['petstore://docs/faq', 'petstore://docs/handbook'],
        resourceTemplates: ['petstore://species/{species}'],
      },
      {
        effect: 'allow',
        clients: ['docs'],
        ...none,
        resources: ['petstore://docs/faq', 'petstore://docs/handbook'],
        resourceTemplates: ['petstore://species/{species}'],
      },
      { effect: 'deny', clients: ['docs'], ...none, prompts: ['adopt'] },
    ]);
  });

  it("keeps a rule's OAuth scopes (sorted, once) and claims for the runtime, and refuses a claim that is not a plain value", async () => {
    const { diagnostics, policy } = await build(`policy:
  access:
    default: deny
    rules:
      - clients: ['*']
        claims: { org: acme, admin: true }
        allow: { names: [deletePet] }
      - clients: ['*']
        scopes: [pets.write, pets.read, pets.write]
        allow: { names: [createPet] }
`);
    expect(diagnostics).toEqual([]);
    expect(policy!.access!.rules.map((r) => ({ scopes: r.scopes, claims: r.claims, tools: r.tools }))).toEqual([
      { scopes: undefined, claims: { org: 'acme', admin: true }, tools: ['deletePet'] },
      { scopes: ['pets.read', 'pets.write'], claims: undefined, tools: ['createPet'] },
    ]);
    const bad = await build(`policy:
  access:
    rules:
      - clients: ['*']
        claims: { org: [acme] }
        deny: { names: [deletePet] }
`);
    expect(bad.diagnostics.map((d) => d.code)).toContain('MCPGEN_MANIFEST_INVALID');
  });

  it("matches persist_justification, gate prompts (following their tools' concerns) and with_context", async () => {
    const { diagnostics, policy } = await build(`preprocessors:
  - { name: ctx, handler: 'handlers/h.ts#fee' }
reflection:
  gates:
    deletePet: { domain: pets, prompt: why_delete, template: 'Why delete {{id}}?', promptArgs: { id: '{{petId}}' } }
policy:
  access:
    rules:
      - clients: ['*']
        allow: { names: [persist_justification, why_delete, with_context] }
      - clients: ['*']
        deny: { kinds: [prompts], concerns: { risk: high } }
`);
    expect(diagnostics.filter((d) => d.code.startsWith('MCPGEN_POLICY'))).toEqual([]);
    expect(policy!.access!.rules.map(sets)).toEqual([
      { effect: 'allow', clients: ['*'], ...none, tools: ['persist_justification'], prompts: ['why_delete', 'with_context'] },
      { effect: 'deny', clients: ['*'], ...none, prompts: ['why_delete'] },
    ]);
  });
});

describe('policy audit and limits', () => {
  it('keeps the audit settings as given and resolves limits to tool names, the default filling what an entry leaves out', async () => {
    const { diagnostics, policy } = await build(`policy:
  audit:
    file: audit/mcp.jsonl
    stderr: false
    redact: [password, ssn]
    chain: true
    onWriteError: continue
  limits:
    default: { timeoutMs: 30000, maxConcurrent: 8, perMinute: { client: 60, overall: 600 }, maxResponseBytes: 1000000 }
    tools:
      'delete*': { perMinute: { client: 5 } }
      order_remove: { timeoutMs: 500 }
`);
    expect(diagnostics).toEqual([]);
    expect(policy).toEqual({
      audit: { file: 'audit/mcp.jsonl', stderr: false, redact: ['password', 'ssn'], chain: true, onWriteError: 'continue' },
      limits: {
        default: { timeoutMs: 30000, maxConcurrent: 8, perMinute: { perClient: 60, overall: 600 }, maxResponseBytes: 1000000 },
        tools: [
          {
            tools: ['deletePet'],
            limits: { timeoutMs: 30000, maxConcurrent: 8, perMinute: { perClient: 5, overall: 600 }, maxResponseBytes: 1000000 },
            source: 'policy.limits.tools["delete*"]',
          },
          {
            tools: ['order_remove'],
            limits: { timeoutMs: 500, maxConcurrent: 8, perMinute: { perClient: 60, overall: 600 }, maxResponseBytes: 1000000 },
            source: 'policy.limits.tools["order_remove"]',
          },
        ],
      },
    });
  });
});

describe('policy diagnostics, each located', () => {
  it('audit: no sink, and chain without a file', async () => {
    const a = await build(`policy:\n  audit: { redact: [x] }\n`);
    expect(a.diagnostics.map((d) => [d.code, d.severity, d.at])).toEqual([['MCPGEN_POLICY_AUDIT_NO_SINK', 'error', 'mcpgen.yaml:2:10 /policy/audit']]);
    expect(a.diagnostics[0]!.help).toContain('set `file: audit/mcp.jsonl`');
    const b = await build(`policy:\n  audit:\n    stderr: true\n    chain: true\n`);
    expect(b.diagnostics.map((d) => [d.code, d.severity, d.at])).toEqual([
      ['MCPGEN_POLICY_AUDIT_CHAIN_NO_FILE', 'error', 'mcpgen.yaml:4:12 /policy/audit/chain'],
    ]);
  });

  it('access: invalid identities, unknown concerns, values and annotations, unmatched names and tags, rules with no effect', async () => {
    const { diagnostics } = await build(`policy:
  access:
    rules:
      - clients: ['*', 'bad name', 'ok@x.io']
        allow: { concerns: { rsk: low, risk: [low, hihg] } }
      - clients: [a]
        allow: { annotations: { readOnly: true, title: false, openWorldHint: true } }
      - clients: [a]
        deny: { names: [listPets, lstPets], tags: [pet] }
      - clients: [a]
      - clients: [a]
        allow: { kinds: [prompts], names: listPets }
`);
    expect(diagnostics.map((d) => [d.code, d.severity, d.at, d.help])).toEqual([
      ['MCPGEN_POLICY_INVALID_CLIENT', 'error', 'mcpgen.yaml:4:24 /policy/access/rules/0/clients/1', expect.stringContaining('letters, digits and . _ @ -')],
      ['MCPGEN_POLICY_UNKNOWN_CONCERN', 'error', 'mcpgen.yaml:5:30 /policy/access/rules/0/allow/concerns/rsk', 'did you mean "risk"?'],
      ['MCPGEN_POLICY_UNKNOWN_CONCERN_VALUE', 'error', 'mcpgen.yaml:5:52 /policy/access/rules/0/allow/concerns/risk/1', 'did you mean "high"?'],
      [
        'MCPGEN_POLICY_UNKNOWN_ANNOTATION',
        'error',
        'mcpgen.yaml:7:33 /policy/access/rules/1/allow/annotations/readOnly',
        'test one of readOnlyHint, destructiveHint, idempotentHint, openWorldHint',
      ],
      [
        'MCPGEN_POLICY_UNKNOWN_ANNOTATION',
        'error',
        'mcpgen.yaml:7:49 /policy/access/rules/1/allow/annotations/title',
        'test one of readOnlyHint, destructiveHint, idempotentHint, openWorldHint',
      ],
      ['MCPGEN_POLICY_UNMATCHED_SELECTOR', 'warning', 'mcpgen.yaml:9:35 /policy/access/rules/2/deny/names/1', 'did you mean "listPets"?'],
      ['MCPGEN_POLICY_UNMATCHED_SELECTOR', 'warning', 'mcpgen.yaml:9:52 /policy/access/rules/2/deny/tags/0', 'did you mean "pets"?'],
      ['MCPGEN_POLICY_NO_EFFECT', 'warning', 'mcpgen.yaml:10:9 /policy/access/rules/3', 'add `allow: {…}` and/or `deny: {…}` to the rule, or remove it'],
      [
        'MCPGEN_POLICY_UNMATCHED_SELECTOR',
        'warning',
        'mcpgen.yaml:12:43 /policy/access/rules/4/allow/names',
        expect.stringContaining('names are final tool and prompt names'),
      ],
    ]);
    const byCode = (code: string) => diagnostics.filter((d) => d.code === code).map((d) => d.message);
    expect(byCode('MCPGEN_POLICY_UNMATCHED_SELECTOR')).toEqual([
      'policy.access.rules[2].deny: names entry "lstPets" matches no tool, prompt or resource',
      'policy.access.rules[2].deny: tag "pet" is on no tool the server serves',
      'policy.access.rules[4].allow: names entry "listPets" matches no prompt',
    ]);
    expect(byCode('MCPGEN_POLICY_INVALID_CLIENT')).toEqual(['client identity "bad name" of policy.access.rules[0] is not a valid identity']);
  });

  it('access: concerns without any declared concern, and access with no rules and default allow', async () => {
    const base = BASE.slice(0, BASE.indexOf('concerns:\n'));
    const baseLines = base.split('\n').length - 1;
    const dir = project(`policy:\n  access:\n    rules:\n      - clients: [a]\n        allow: { concerns: { risk: low } }\n`, base);
    const res = await compile({ manifestPath: 'mcpgen.yaml', cwd: dir, emit: false });
    expect(res.diagnostics.sorted().map((d) => [d.code, `${d.location.line - baseLines}:${d.location.col}`, d.help])).toEqual([
      ['MCPGEN_POLICY_UNKNOWN_CONCERN', '5:30', 'declare it under `concerns` and map primitives to it in `concernMappings`'],
    ]);
    const { diagnostics } = await build(`policy:\n  access: { default: allow }\n`);
    expect(diagnostics.map((d) => [d.code, d.severity, d.at])).toEqual([['MCPGEN_POLICY_NO_EFFECT', 'warning', 'mcpgen.yaml:2:11 /policy/access']]);
  });

  it('limits: a tools key that matches no tool warns and is left out', async () => {
    const { diagnostics, policy } = await build(`policy:\n  limits:\n    tools:\n      'remove*': { maxConcurrent: 1 }\n      lstPets: { maxConcurrent: 1 }\n`);
    expect(diagnostics.map((d) => [d.code, d.severity, d.at, d.help])).toEqual([
      ['MCPGEN_POLICY_UNMATCHED_LIMIT', 'warning', 'mcpgen.yaml:4:7 /policy/limits/tools/remove*', expect.stringContaining('glob')],
      ['MCPGEN_POLICY_UNMATCHED_LIMIT', 'warning', 'mcpgen.yaml:5:7 /policy/limits/tools/lstPets', 'did you mean "listPets"?'],
    ]);
    expect(policy!.limits).toEqual({ tools: [] });
  });

  it('the schema rejects numbers ≤ 0, unknown keys and values of the wrong kind', async () => {
    const { diagnostics } = await build(`policy:
  limits:
    default: { timeoutMs: 0, maxConcurrent: -1, perMinute: { client: 0 } }
  access:
    default: maybe
    rules:
      - clients: []
        allow: { annotations: { readOnlyHint: yes }, kinds: [tools, widgets], nmes: [x] }
  audit: { file: a.jsonl, onWriteError: ignore }
`);
    const codes = diagnostics.map((d) => [d.code, d.at.replace(/^mcpgen\.yaml:\d+:\d+ /, '')]);
    expect(codes).toEqual(
      expect.arrayContaining([
        ['MCPGEN_MANIFEST_INVALID', '/policy/limits/default/timeoutMs'],
        ['MCPGEN_MANIFEST_INVALID', '/policy/limits/default/maxConcurrent'],
        ['MCPGEN_MANIFEST_INVALID', '/policy/limits/default/perMinute/client'],
        ['MCPGEN_MANIFEST_INVALID', '/policy/access/default'],
        ['MCPGEN_MANIFEST_INVALID', '/policy/access/rules/0/clients'],
        ['MCPGEN_MANIFEST_INVALID', '/policy/access/rules/0/allow/annotations/readOnlyHint'],
        ['MCPGEN_MANIFEST_INVALID', '/policy/access/rules/0/allow/kinds/1'],
        ['MCPGEN_MANIFEST_UNKNOWN_KEY', '/policy/access/rules/0/allow/nmes'],
        ['MCPGEN_MANIFEST_INVALID', '/policy/audit/onWriteError'],
      ]),
    );
    expect(diagnostics.every((d) => d.severity === 'error' && /^mcpgen\.yaml:\d+:\d+ /.test(d.at) && !d.at.includes(':0:'))).toBe(true);
  });

  it('every new code is in the catalogue', () => {
    for (const code of [
      'MCPGEN_POLICY_AUDIT_NO_SINK',
      'MCPGEN_POLICY_AUDIT_CHAIN_NO_FILE',
      'MCPGEN_POLICY_INVALID_CLIENT',
      'MCPGEN_POLICY_UNKNOWN_CONCERN',
      'MCPGEN_POLICY_UNKNOWN_CONCERN_VALUE',
      'MCPGEN_POLICY_UNKNOWN_ANNOTATION',
      'MCPGEN_POLICY_UNMATCHED_SELECTOR',
      'MCPGEN_POLICY_UNMATCHED_LIMIT',
      'MCPGEN_POLICY_NO_EFFECT',
    ]) {
      expect(CATALOG, code).toHaveProperty(code);
    }
  });
});

describe('emitted src/policy.gen.ts', () => {
  const POLICY = `policy:
  audit: { file: 'audit/</script>.jsonl', redact: [password] }
  access:
    default: deny
    rules:
      - clients: [reader]
        allow: { annotations: { readOnlyHint: true } }
      - clients: [ops, admin]
        allow: { tags: [pets], names: ['get*', 'list*', adoption_fee] }
        deny: { names: [deletePet] }
  limits:
    tools:
      'delete*': { perMinute: { client: 5 } }
`;

  it('exports the resolved policy as a typed literal, copies policy-types.ts, and only when the manifest has a policy', async () => {
    const { res, diagnostics } = await build(POLICY, { emit: true });
    expect(diagnostics).toEqual([]);
    const files = res.files!;
    const text = files.get('src/policy.gen.ts')!;
    expect(text).toContain("import type { PolicyConfig } from './runtime/policy/policy-types.js';");
    expect(text).toContain('export const policy: PolicyConfig = {');
    // manifest text reaches the code only through tsLiteral
    expect(text).toContain('"audit/\\u003c/script>.jsonl"');
    expect(files.get('src/runtime/policy/policy-types.ts')).toContain('export type PolicyConfig');
    // it parses, and its literal is exactly the IR's policy
    // (esbuild throws on a syntax error; it strips the type-only import and the annotation)
    const js = transformSync(text, { loader: 'ts', format: 'cjs' }).code;
    const mod: { exports: { policy?: unknown } } = { exports: {} };
    new Function('module', 'exports', js)(mod, mod.exports);
    expect(mod.exports.policy).toEqual(res.ir!.policy);
    expect(mod.exports.policy).toMatchObject({
      access: {
        default: 'deny',
        rules: [
          { clients: ['reader'], tools: ['adoption_fee', 'getOrder', 'listPets', 'pet_get'] },
          { clients: ['admin', 'ops'], effect: 'allow', tools: ['listPets'] },
          { effect: 'deny', tools: ['deletePet'] },
        ],
      },
    });

    const plain = await build('', { emit: true });
    expect(plain.res.files!.has('src/policy.gen.ts')).toBe(false);
    expect(plain.res.files!.has('src/runtime/policy/policy-types.ts')).toBe(false);
  });

  it('is deterministic: the same bytes from two builds and from reordered input', async () => {
    const a = await build(POLICY, { emit: true });
    const b = await build(POLICY, { emit: true });
    expect(a.res.files!.get('src/policy.gen.ts')).toBe(b.res.files!.get('src/policy.gen.ts'));
    const reordered = await build(
      POLICY.replace('clients: [ops, admin]', 'clients: [admin, ops]').replace(
        "names: ['get*', 'list*', adoption_fee]",
        "names: [adoption_fee, 'list*', 'get*']",
      ),
      { emit: true },
    );
    expect(reordered.res.files!.get('src/policy.gen.ts')).toBe(a.res.files!.get('src/policy.gen.ts'));
  });
});
