/**
 * Schema validation of the manifest: ajv over schemas/manifest.schema.json, with every ajv error
 * turned into a located diagnostic that says what is wrong and how to fix it.
 *
 * Errors under one `anyOf` are collapsed: when the value's type fits exactly one alternative,
 * that alternative alone is validated again and its (precise) errors are reported; otherwise a
 * single "must be a string or a list of strings" diagnostic replaces the wall of branch errors.
 */
import type { Ajv2020, ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import { type Diagnostic, type Diagnostics, escapePointerToken } from '../core/diagnostics.js';
import { ajv2020, generatedCheck } from '../core/lazy.js';
import type { YamlSource } from '../source/source.js';
import { allowedKeys, closest, describeSchema, describeValue, jsonType, oneOf, quote, subject, typeMatches } from './describe.js';
import { isRecord, manifestSchema, schemaAt } from './schema.js';

type Compiled = {
  ajv: Ajv2020;
  validate: ValidateFunction;
  /** JSON pointer (into the schema) of every object and array of the schema, by identity. */
  pointers: WeakMap<object, string>;
  id: string;
};

type Issue = {
  code: 'MCPGEN_MANIFEST_UNKNOWN_KEY' | 'MCPGEN_MANIFEST_INVALID';
  message: string;
  help: string;
  pointer: string;
  /** Locate the mapping key at `pointer` rather than its value. */
  key?: boolean;
  /** For an unknown key: the allowed key it was probably meant to be. */
  meant?: string;
  /** For a missing required key: its name. */
  missing?: string;
};

let compiled: Compiled | undefined;

function compile(): Compiled {
  if (compiled) return compiled;
  const schema = manifestSchema();
  const ajv = new (ajv2020().Ajv2020)({ allErrors: true, verbose: true, strict: false });
  const validate = ajv.compile(schema);
  const pointers = new WeakMap<object, string>();
  const walk = (node: unknown, ptr: string) => {
    if (typeof node !== 'object' || node === null) return;
    pointers.set(node, ptr);
    for (const [k, v] of Object.entries(node)) walk(v, `${ptr}/${escapePointerToken(k)}`);
  };
  walk(schema, '');
  compiled = { ajv, validate, pointers, id: typeof schema.$id === 'string' ? schema.$id : '' };
  return compiled;
}

/**
 * Validates a parsed manifest against the manifest schema. Every problem is added to
 * `diagnostics` (all at once, ordered by position); returns true when there was none.
 */
export function validateManifest(source: YamlSource, diagnostics: Diagnostics): boolean {
  let issues: Issue[];
  if (source.value === null || source.value === undefined) {
    issues = [{ code: 'MCPGEN_MANIFEST_INVALID', message: 'the manifest is empty', help: ROOT_HELP, pointer: '' }];
  } else {
    // the precompiled check answers for a valid manifest; the full validator (compiled only
    // then) explains an invalid one
    const c = generatedCheck('manifest')(source.value) ? undefined : compile();
    issues = c === undefined || c.validate(source.value) ? [] : withoutTypoEchoes(toIssues([...(c.validate.errors ?? [])], '', c));
    // YAML's .inf and .nan are numbers to the schema, but nothing mcpgen writes can carry them
    const flagged = new Set(issues.map((i) => i.pointer));
    issues.push(...nonFinite(source.value).filter((i) => !flagged.has(i.pointer)));
    if (issues.length === 0) return true;
  }
  const seen = new Set<string>();
  const out: Diagnostic[] = [];
  for (const i of issues) {
    const id = `${i.code}\0${i.pointer}\0${i.message}`;
    if (seen.has(id)) continue;
    seen.add(id);
    const location = source.locate(i.pointer, i.key ? { key: true } : undefined);
    out.push({ code: i.code, severity: 'error', message: i.message, help: i.help, location });
  }
  const cmp = (a: string | number, b: string | number) => (a < b ? -1 : a > b ? 1 : 0);
  out.sort(
    (a, b) =>
      cmp(a.location.line, b.location.line) || cmp(a.location.col, b.location.col) || cmp(a.location.pointer, b.location.pointer) || cmp(a.message, b.message),
  );
  for (const d of out) diagnostics.add(d);
  return out.length === 0;
}

/**
 * `nmae: x` yields both "unknown key nmae" (did you mean "name"?) and "missing required key
 * name"; the second says nothing new, so it is dropped.
 */
function withoutTypoEchoes(issues: Issue[]): Issue[] {
  const meant = new Set(issues.flatMap((i) => (i.meant ? [`${i.pointer.slice(0, i.pointer.lastIndexOf('/'))}/${escapePointerToken(i.meant)}`] : [])));
  return issues.filter((i) => i.missing === undefined || !meant.has(`${i.pointer}/${escapePointerToken(i.missing)}`));
}

/** An issue for every `.inf`, `-.inf` and `.nan` in the manifest. */
function nonFinite(value: unknown): Issue[] {
  const out: Issue[] = [];
  const walk = (node: unknown, ptr: string) => {
    if (typeof node === 'number' && !Number.isFinite(node)) {
      const spelled = Number.isNaN(node) ? '.nan' : node > 0 ? '.inf' : '-.inf';
      out.push({
        code: 'MCPGEN_MANIFEST_INVALID',
        message: `${subject(ptr)} is ${spelled}, a number JSON cannot express`,
        help: 'use a finite number, or leave the key out',
        pointer: ptr,
      });
    } else if (Array.isArray(node)) node.forEach((v, i) => walk(v, `${ptr}/${i}`));
    else if (isRecord(node)) for (const [k, v] of Object.entries(node)) walk(v, `${ptr}/${escapePointerToken(k)}`);
  };
  walk(value, '');
  return out;
}

const ROOT_HELP = 'the manifest is a YAML mapping; it needs at least `name:` and `openapi:`';

const within = (path: string, base: string) => path === base || path.startsWith(base + '/');

/** Maps ajv errors (instance paths relative to `prefix`) to issues, collapsing anyOf branches. */
function toIssues(errors: ErrorObject[], prefix: string, c: Compiled): Issue[] {
  const absorbed = new Set<number>();
  errors.forEach((e, k) => {
    if (e.keyword !== 'anyOf' && e.keyword !== 'oneOf') return;
    // ajv appends an anyOf's own error right after the errors of its branches: walk back over
    // them (they sit at or below the anyOf's instance path and come from other schema objects).
    for (let j = k - 1; j >= 0; j--) {
      const f = errors[j]!;
      if (!within(f.instancePath, e.instancePath) || f.parentSchema === e.parentSchema) break;
      absorbed.add(j);
    }
  });
  return errors.flatMap((e, k) => (absorbed.has(k) ? [] : issuesOf(e, prefix, c)));
}

function issuesOf(e: ErrorObject, prefix: string, c: Compiled): Issue[] {
  const ptr = prefix + e.instancePath;
  const p = e.params as Record<string, unknown>;
  const desc = () => schemaAt(ptr).description ?? (typeof e.parentSchema?.description === 'string' ? e.parentSchema.description : undefined);
  const invalid = (message: string, help: string | undefined, at = ptr): Issue[] => [
    { code: 'MCPGEN_MANIFEST_INVALID', message, help: help ?? 'fix the value so that it matches the manifest schema', pointer: at },
  ];
  const who = subject(ptr);
  const got = describeValue(e.data);
  switch (e.keyword) {
    case 'additionalProperties': {
      const key = String(p.additionalProperty);
      const allowed = allowedKeys(e.parentSchema);
      const near = closest(key, allowed);
      const help = near ? `did you mean "${near}"?` : allowed.length > 0 ? `allowed keys: ${allowed.join(', ')}` : 'remove this key';
      const issue: Issue = {
        code: 'MCPGEN_MANIFEST_UNKNOWN_KEY',
        message: `unknown key ${quote(key)}`,
        help,
        pointer: `${ptr}/${escapePointerToken(key)}`,
        key: true,
      };
      if (near) issue.meant = near;
      return [issue];
    }
    case 'required': {
      const key = String(p.missingProperty);
      const about = schemaAt(`${ptr}/${escapePointerToken(key)}`).description;
      const help = `add \`${key}:\`${about ? `. ${about}` : ''}`;
      return [{ code: 'MCPGEN_MANIFEST_INVALID', message: `missing required key ${quote(key)}`, help, pointer: ptr, missing: key }];
    }
    case 'type': {
      const want = Array.isArray(p.type) ? p.type.join(' or ') : String(p.type);
      if (ptr === '') return invalid(`the manifest must be ${want}, got ${got}`, ROOT_HELP);
      return invalid(`${who} must be ${want}, got ${got}`, unquoteHint(e.data, want) ?? desc());
    }
    case 'enum': {
      const values = Array.isArray(p.allowedValues) ? p.allowedValues : [];
      const near =
        typeof e.data === 'string'
          ? closest(
              e.data,
              values.filter((v): v is string => typeof v === 'string'),
            )
          : undefined;
      return invalid(`${who} must be ${oneOf(values)}, got ${got}`, near ? `did you mean "${near}"?` : desc());
    }
    case 'const':
      return invalid(`${who} must be ${JSON.stringify(p.allowedValue)}, got ${got}`, desc());
    case 'pattern':
      return invalid(`${who} must match the pattern ${String(p.pattern)}, got ${got}`, desc());
    case 'format':
      return invalid(`${who} must be a valid ${String(p.format)}, got ${got}`, desc());
    case 'minLength':
    case 'maxLength': {
      const limit = Number(p.limit);
      const len = typeof e.data === 'string' ? [...e.data].length : 0;
      if (e.keyword === 'minLength' && limit === 1) return invalid(`${who} must not be empty`, desc());
      const bound = e.keyword === 'minLength' ? 'at least' : 'at most';
      return invalid(`${who} must be ${bound} ${limit} characters long, got ${len}`, desc());
    }
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum': {
      const words: Record<string, string> = { '>=': 'at least', '<=': 'at most', '>': 'greater than', '<': 'less than' };
      return invalid(`${who} must be ${words[String(p.comparison)] ?? String(p.comparison)} ${String(p.limit)}, got ${String(e.data)}`, desc());
    }
    case 'minItems':
    case 'maxItems': {
      const limit = Number(p.limit);
      const count = Array.isArray(e.data) ? e.data.length : 0;
      if (e.keyword === 'minItems' && limit === 1) return invalid(`${who} must not be an empty list`, desc());
      return invalid(`${who} must have ${e.keyword === 'minItems' ? 'at least' : 'at most'} ${limit} items, got ${count}`, desc());
    }
    case 'minProperties': {
      const allowed = allowedKeys(e.parentSchema);
      const help = allowed.length > 0 ? `give at least one of: ${allowed.join(', ')}` : desc();
      if (Number(p.limit) === 1) return invalid(`${who} must not be empty`, help);
      return invalid(`${who} must have at least ${String(p.limit)} keys`, help);
    }
    case 'uniqueItems': {
      const i = Math.max(Number(p.i), Number(p.j));
      const item = Array.isArray(e.data) ? (e.data as unknown[])[i] : undefined;
      return invalid(`${who} lists ${JSON.stringify(item)} more than once`, 'remove the repeated entry', `${ptr}/${i}`);
    }
    case 'anyOf':
    case 'oneOf':
      return alternativesIssues(e, ptr, c, desc());
    default:
      return invalid(`${who} ${e.message ?? 'is invalid'}`, desc());
  }
}

/** One anyOf/oneOf failure: the errors of the one alternative the value's type fits, or one summary. */
function alternativesIssues(e: ErrorObject, ptr: string, c: Compiled, help: string | undefined): Issue[] {
  const branches = Array.isArray(e.schema) ? (e.schema as unknown[]) : [];
  const passing = (e.params as Record<string, unknown>).passingSchemas;
  const fitting = branches.flatMap((b, i) => (typeMatches(b, e.data) ? [i] : []));
  const base = c.pointers.get(e.schema as object);
  if (passing == null && fitting.length === 1 && base !== undefined) {
    const branch = c.ajv.getSchema(`${c.id}#${base}/${fitting[0]}`) as ValidateFunction | undefined;
    if (branch && !branch(e.data) && branch.errors?.length) return toIssues([...branch.errors], ptr, c);
  }
  const what = describeSchema(isRecord(e.parentSchema) ? e.parentSchema : undefined);
  const message = passing != null ? `${subject(ptr)} matches more than one of: ${what}` : `${subject(ptr)} must be ${what}, got ${describeValue(e.data)}`;
  return [{ code: 'MCPGEN_MANIFEST_INVALID', message, help: help ?? 'fix the value so that it matches the manifest schema', pointer: ptr }];
}

/** `maxToolNameLength: "64"` — a quoted number or boolean: suggest dropping the quotes. */
function unquoteHint(data: unknown, want: string): string | undefined {
  if (typeof data !== 'string') return undefined;
  const t = data.trim();
  if ((want === 'integer' || want === 'number') && t !== '' && Number.isFinite(Number(t)) && jsonType(Number(t)) === 'integer') {
    return `remove the quotes: ${t}`;
  }
  if (want === 'number' && t !== '' && Number.isFinite(Number(t))) return `remove the quotes: ${t}`;
  if (want === 'boolean' && (t === 'true' || t === 'false')) return `remove the quotes: ${t}`;
  return undefined;
}
