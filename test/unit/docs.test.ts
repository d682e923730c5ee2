import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CATALOG } from '../../src/core/diagnostics.js';
import { GENERATED_DEPENDENCIES, GENERATED_DEV_DEPENDENCIES, OPTIONAL_DEPENDENCIES } from '../../src/emit/project/versions.js';

describe('docs and pins stay in step with the code', () => {
  it('documents every diagnostic code, and only those', () => {
    const doc = readFileSync(new URL('../../docs/diagnostics.md', import.meta.url), 'utf8');
    const documented = [...doc.matchAll(/^\| `(MCPGEN_[A-Z_]+)`/gm)].map((m) => m[1]).sort();
    expect(documented).toEqual(Object.keys(CATALOG).sort());
  });

  it('generates projects against the versions the runtime is tested with', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as Record<string, Record<string, string>>;
    const lock = JSON.parse(readFileSync(new URL('../../package-lock.json', import.meta.url), 'utf8')) as { packages: Record<string, { version: string }> };
    const installed = (name: string) => lock.packages[`node_modules/${name}`]?.version;
    for (const [name, version] of Object.entries({ ...GENERATED_DEPENDENCIES, ...OPTIONAL_DEPENDENCIES, ...GENERATED_DEV_DEPENDENCIES })) {
      expect(installed(name), name).toBe(version);
    }
    // the runtime is type-checked and tested against the SDK packages the projects get
    expect(pkg.dependencies!['@modelcontextprotocol/server']).toBe(GENERATED_DEPENDENCIES['@modelcontextprotocol/server']);
    expect(pkg.dependencies!['@modelcontextprotocol/node']).toBe(GENERATED_DEPENDENCIES['@modelcontextprotocol/node']);
    // the pins mcpgen itself declares (and tests the runtime with)
    expect(pkg.dependencies!.handlebars).toBe(OPTIONAL_DEPENDENCIES.handlebars);
    expect(pkg.devDependencies!.zod).toBe(GENERATED_DEPENDENCIES.zod);
    expect(pkg.dependencies!.re2js).toBe(GENERATED_DEPENDENCIES.re2js);
  });
});

describe('manifest reference', () => {
  it('documents every manifest key and selector field the schema defines', () => {
    const doc = readFileSync(new URL('../../docs/manifest.md', import.meta.url), 'utf8');
    const schema = JSON.parse(readFileSync(new URL('../../schemas/manifest.schema.json', import.meta.url), 'utf8')) as {
      properties: Record<string, unknown>;
      $defs: Record<string, { properties: Record<string, unknown> }>;
    };
    const fieldsOf = (...defs: string[]) => defs.flatMap((d) => Object.keys(schema.$defs[d]!.properties));
    const keys = [
      ...Object.keys(schema.properties),
      ...fieldsOf(
        'selector',
        'override',
        'argumentOverride',
        'argumentRule',
        'extraTool',
        'prompt',
        'resource',
        'resourceTemplate',
        'concern',
        'preprocessor',
        'reflection',
        'reflectionGate',
      ),
    ];
    for (const key of keys) expect(doc, key).toContain(`| \`${key}\` |`);
  });
});
