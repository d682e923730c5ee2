/**
 * Checks an accepted elicitation answer (untrusted client data) against the form it answered:
 * the restricted schema of `elicitation/create` — a flat object whose properties are strings
 * (length, `format`, `pattern`, `enum` / `oneOf` of `const`s), numbers and integers (bounds),
 * booleans, and arrays of enum strings (multi-select: `items.enum` / `items.anyOf`, item
 * counts). Written out rather than compiled with Ajv: forms are built by handlers at run time,
 * often with the call's data in them, and a compiled-schema cache would grow with each.
 *
 * This file is copied verbatim into every generated project.
 */

/** One property of an elicitation form (what this check reads of it). */
type FieldSchema = {
  readonly type?: unknown;
  readonly enum?: unknown;
  readonly oneOf?: unknown;
  readonly items?: { readonly enum?: unknown; readonly anyOf?: unknown };
  readonly minLength?: unknown;
  readonly maxLength?: unknown;
  readonly pattern?: unknown;
  readonly format?: unknown;
  readonly minimum?: unknown;
  readonly maximum?: unknown;
  readonly minItems?: unknown;
  readonly maxItems?: unknown;
};

/** An elicitation form: `{ type: 'object', properties, required }`. */
export type ElicitForm = { readonly type?: 'object'; readonly properties: Readonly<Record<string, unknown>>; readonly required?: readonly string[] };

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** The allowed values of a single-select (`enum`, or `oneOf` of `{ const }`), or of a multi-select's items. */
function choices(enumeration: unknown, titled: unknown): unknown[] | undefined {
  if (Array.isArray(enumeration)) return enumeration;
  if (Array.isArray(titled)) return titled.map((o) => (typeof o === 'object' && o !== null ? (o as { const?: unknown }).const : undefined));
  return undefined;
}

const FORMATS: Readonly<Record<string, RegExp>> = {
  email: /^[^\s@]+@[^\s@]+$/,
  uri: /^[A-Za-z][A-Za-z0-9+.-]*:\S*$/,
  date: /^\d{4}-\d{2}-\d{2}$/,
  'date-time': /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/,
};

function checkField(name: string, schema: FieldSchema, value: unknown): string[] {
  const type = schema.type;
  if (type === 'string') {
    if (typeof value !== 'string') return [`${name}: must be string`];
    const out: string[] = [];
    const allowed = choices(schema.enum, schema.oneOf);
    if (allowed !== undefined && !allowed.includes(value)) out.push(`${name}: must be one of ${allowed.map((a) => JSON.stringify(a)).join(', ')}`);
    const min = num(schema.minLength);
    const max = num(schema.maxLength);
    const length = [...value].length;
    if (min !== undefined && length < min) out.push(`${name}: must have at least ${min} characters`);
    if (max !== undefined && length > max) out.push(`${name}: must have at most ${max} characters`);
    if (typeof schema.format === 'string' && FORMATS[schema.format] !== undefined && !FORMATS[schema.format]!.test(value))
      out.push(`${name}: must be a valid ${schema.format}`);
    if (typeof schema.pattern === 'string') {
      let re: RegExp | undefined;
      try {
        re = new RegExp(schema.pattern, 'u');
      } catch {
        re = undefined;
      }
      if (re !== undefined && !re.test(value)) out.push(`${name}: must match ${schema.pattern}`);
    }
    return out;
  }
  if (type === 'number' || type === 'integer') {
    if (typeof value !== 'number' || !Number.isFinite(value) || (type === 'integer' && !Number.isInteger(value))) return [`${name}: must be ${type}`];
    const out: string[] = [];
    const min = num(schema.minimum);
    const max = num(schema.maximum);
    if (min !== undefined && value < min) out.push(`${name}: must be >= ${min}`);
    if (max !== undefined && value > max) out.push(`${name}: must be <= ${max}`);
    return out;
  }
  if (type === 'boolean') return typeof value === 'boolean' ? [] : [`${name}: must be boolean`];
  if (type === 'array') {
    if (!Array.isArray(value)) return [`${name}: must be array`];
    const out: string[] = [];
    const allowed = choices(schema.items?.enum, schema.items?.anyOf);
    for (const item of value)
      if (allowed !== undefined && !allowed.includes(item))
        out.push(`${name}: ${JSON.stringify(item)} is not one of ${allowed.map((a) => JSON.stringify(a)).join(', ')}`);
    const min = num(schema.minItems);
    const max = num(schema.maxItems);
    if (min !== undefined && value.length < min) out.push(`${name}: must have at least ${min} items`);
    if (max !== undefined && value.length > max) out.push(`${name}: must have at most ${max} items`);
    return out;
  }
  return [];
}

/** The problems of `content` as an answer to `form` (`[]`: valid): unknown fields, missing required ones, wrong values. */
export function checkElicitAnswer(form: ElicitForm, content: unknown): string[] {
  if (typeof content !== 'object' || content === null || Array.isArray(content)) return ['content: must be an object'];
  const answer = content as Record<string, unknown>;
  const problems: string[] = [];
  for (const name of form.required ?? []) if (!Object.hasOwn(answer, name)) problems.push(`${name}: is required`);
  for (const [name, value] of Object.entries(answer)) {
    const schema = Object.hasOwn(form.properties, name) ? form.properties[name] : undefined;
    if (typeof schema !== 'object' || schema === null) {
      problems.push(`${name}: is not a field of the form`);
      continue;
    }
    problems.push(...checkField(name, schema as FieldSchema, value));
  }
  return problems;
}
