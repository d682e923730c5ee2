/**
 * Primitives registered in code (runtime registry.ts) and the policy they fall under
 * (registered-policy.ts): the seed's duplicate messages for every kind — against the server's own
 * primitives and earlier registrations —, the checks a manifest primitive gets (MCP-legal names,
 * schemas Ajv compiles, URIs, URI templates, declared concerns), and access rules and limits
 * matched against the registered names at run time.
 */
import { describe, expect, it } from 'vitest';
import type { PolicyConfig } from '../../../templates/runtime/policy/policy-types.js';
import { globMatcher, withRegistered } from '../../../templates/runtime/policy/registered-policy.js';
import { Registry } from '../../../templates/runtime/server/registry.js';

const taken = { tools: ['listPets'], prompts: ['greet'], resources: ['app://about'], resourceTemplates: ['app://pets/{id}'] };
const declarations = [{ name: 'risk', values: ['low', 'high'] }];
const object = { type: 'object' } as const;
const noop = () => 'x';

describe('Registry', () => {
  it("throws the seed's message for a name the server has or an earlier registration took, for every kind", () => {
    const r = new Registry(taken, declarations);
    expect(() => r.addTool('listPets', { inputSchema: object }, noop)).toThrow("Tool with name 'listPets' already exists");
    r.addTool('flag', { inputSchema: object }, noop);
    expect(() => r.addTool('flag', { inputSchema: object }, noop)).toThrow("Tool with name 'flag' already exists");
    expect(() => r.addPrompt({ name: 'greet', messages: [{ role: 'user', text: 'hi' }] })).toThrow("Prompt with name 'greet' already exists");
    r.addPrompt({ name: 'tour', handler: () => ({ messages: [] }) });
    expect(() => r.addPrompt({ name: 'tour', handler: () => ({ messages: [] }) })).toThrow("Prompt with name 'tour' already exists");
    expect(() => r.addResource({ uri: 'app://about', name: 'a', text: 't' })).toThrow("Resource with URI 'app://about' already exists");
    expect(() => r.addTemplate({ uriTemplate: 'app://pets/{id}', name: 'p', handler: noop })).toThrow(
      "Resource template with URI template 'app://pets/{id}' already exists",
    );
    expect(r.tools.map((t) => t.name)).toEqual(['flag']);
    expect(r.prompts.map((p) => p.name)).toEqual(['tour']);
  });

  it('checks what the build checks of a manifest primitive', () => {
    const r = new Registry(taken, declarations);
    expect(() => r.addTool('has space', { inputSchema: object }, noop)).toThrow(/^Invalid tool name "has space"/);
    expect(() => r.addTool('x'.repeat(129), { inputSchema: object }, noop)).toThrow(/^Invalid tool name/);
    expect(() => r.addTool('t', { inputSchema: { type: 'array' } }, noop)).toThrow('Tool t: inputSchema must be a JSON Schema of type "object"');
    expect(() => r.addTool('t', { inputSchema: { type: 'object', properties: { a: { type: 'nope' } } } }, noop)).toThrow(
      /^The input schema of tool t cannot be compiled: schema is invalid/,
    );
    expect(() => r.addTool('t', { inputSchema: object, outputSchema: { type: 'object', required: 'a' } }, noop)).toThrow(
      /^The output schema of tool t cannot be compiled/,
    );
    expect(() => r.addTool('t', { inputSchema: object, concerns: { mood: 'x' } }, noop)).toThrow('Tool t: unknown concern "mood" (declared: risk)');
    expect(() => r.addTool('t', { inputSchema: object, concerns: { risk: 'medium' } }, noop)).toThrow(
      'Tool t: "medium" is not a value of concern risk (low, high)',
    );
    expect(() => r.addPrompt({ name: 'p', messages: [{ role: 'user', text: 'a' }], handler: () => ({ messages: [] }) } as never)).toThrow(
      'Prompt p: give either messages or a handler',
    );
    expect(() => r.addResource({ uri: 'not a uri', name: 'n', text: 't' })).toThrow('Invalid resource URI "not a uri": it must be an absolute URI');
    expect(() => r.addResource({ uri: 'app://x', name: 'n', text: 't', blob: 'AA==' })).toThrow('Resource app://x: give exactly one of text, blob and handler');
    expect(() => r.addTemplate({ uriTemplate: 'app://{unclosed', name: 'n', handler: noop })).toThrow(/^Invalid resource URI template "app:\/\/\{unclosed"/);
    // nothing half-registered
    expect(r.tools).toEqual([]);
    expect(() => new Registry(taken).addTool('t', { inputSchema: object, concerns: { risk: 'low' } }, noop)).toThrow(
      'Tool t: concerns given, but the server declares none (manifest `concerns`)',
    );
  });

  it("adds the registered concern mappings to the manifest's", () => {
    const r = new Registry(taken, declarations);
    r.addTool('flag', { inputSchema: object, concerns: { risk: 'high' } }, noop);
    r.addResource({ uri: 'app://notes', name: 'n', text: 't', concerns: { risk: ['low', 'high'] } });
    expect(r.mappings({ tools: { listPets: { risk: 'low' } } })).toEqual({
      tools: { listPets: { risk: 'low' }, flag: { risk: 'high' } },
      prompts: {},
      resources: { 'app://notes': { risk: ['low', 'high'] } },
      resourceTemplates: {},
    });
  });
});

describe('the policy of registered primitives', () => {
  const rule = (over: object) => ({
    clients: ['reader'],
    effect: 'deny' as const,
    tools: [],
    prompts: [],
    resources: [],
    resourceTemplates: [],
    source: 'policy.access.rules[0].deny',
    ...over,
  });

  it('globs as the compiler reads them: * within a segment, ** across, braces literal', () => {
    expect(globMatcher('flag_*')('flag_pet')).toBe(true);
    expect(globMatcher('app://notes/*')('app://notes/a/b')).toBe(false);
    expect(globMatcher('app://notes/**')('app://notes/a/b')).toBe(true);
    expect(globMatcher('app://pets/{id}')('app://pets/{id}')).toBe(true);
    expect(globMatcher('a.b')('aXb')).toBe(false);
  });

  it('adds a registered primitive to the rules whose run-time selector matches it, and to the limits whose key does', () => {
    const config: PolicyConfig = {
      access: {
        default: 'allow',
        rules: [
          rule({ atRunTime: { names: ['flag_*'] } }),
          rule({ atRunTime: { kinds: ['resources'], concerns: { risk: ['high'] } } }),
          rule({ atRunTime: { annotations: { readOnlyHint: true } } }),
          // a selector testing tags: never a registered primitive
          rule({ tools: ['listPets'] }),
        ],
      },
      limits: { tools: [{ tools: [], limits: { maxConcurrent: 1 }, source: 'policy.limits.tools["flag_*"]', pattern: 'flag_*' }] },
    };
    const out = withRegistered(config, [
      { kind: 'tools', id: 'flag_pet' },
      { kind: 'tools', id: 'peek', annotations: { readOnlyHint: true } },
      { kind: 'resources', id: 'app://notes', concerns: { risk: 'high' } },
      { kind: 'resources', id: 'app://open' },
    ]);
    expect(out.access!.rules.map((r) => [...r.tools, ...r.resources])).toEqual([['flag_pet'], ['app://notes'], ['peek'], ['listPets']]);
    expect(out.limits!.tools[0]!.tools).toEqual(['flag_pet']);
    // the generated config is left as it was
    expect(config.access!.rules[0]!.tools).toEqual([]);
  });
});
