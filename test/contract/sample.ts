/**
 * Representative arguments for a tool, derived from its input schema: every required property
 * and every optional one whose value can be derived safely, with values that satisfy enums,
 * formats, patterns, bounds and lengths. Used to drive every operation against a validating mock.
 */

import { samplePattern } from './sample-pattern.js';

type Schema = Record<string, unknown>;
const isObj = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);

const FORMATS: Record<string, string> = {
  'date-time': '2024-05-01T12:00:00Z',
  date: '2024-05-01',
  time: '12:00:00',
  email: 'someone@example.com',
  uuid: '123e4567-e89b-12d3-a456-426614174000',
  uri: 'https://example.com/x',
  url: 'https://example.com/x',
  hostname: 'example.com',
  ipv4: '192.0.2.1',
  byte: 'aGVsbG8=',
  binary: 'aGVsbG8=',
};

/** A sample value for `schema`; `undefined` when none can be derived safely. */
export function sample(schema: unknown, root: Schema, depth = 0): unknown {
  if (schema === true || schema === undefined) return 'example';
  if (!isObj(schema) || depth > 6) return undefined;
  if (typeof schema.$ref === 'string') {
    const name = decodeURIComponent(schema.$ref.replace(/^#\/\$defs\//, ''));
    const defs = isObj(root.$defs) ? root.$defs : {};
    return depth > 3 ? undefined : sample(defs[name], root, depth + 1);
  }
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum.find((v) => v !== null);
  if (schema.default !== undefined) return schema.default;
  if (Array.isArray(schema.examples) && schema.examples.length) return schema.examples[0];
  if (Array.isArray(schema.allOf)) {
    const parts = schema.allOf.map((s) => sample(s, root, depth + 1));
    return parts.every(isObj) ? Object.assign({}, ...parts) : parts[0];
  }
  const alts = Array.isArray(schema.oneOf) ? schema.oneOf : Array.isArray(schema.anyOf) ? schema.anyOf : undefined;
  if (alts)
    return sample(
      alts.find((a) => !(isObj(a) && a.type === 'null')),
      root,
      depth + 1,
    );
  const types = Array.isArray(schema.type) ? schema.type.filter((t) => t !== 'null') : [schema.type ?? (isObj(schema.properties) ? 'object' : undefined)];
  switch (types[0]) {
    case 'string': {
      const min = typeof schema.minLength === 'number' ? schema.minLength : 0;
      const max = typeof schema.maxLength === 'number' ? schema.maxLength : Infinity;
      if (typeof schema.pattern === 'string') {
        const s = samplePattern(schema.pattern);
        return s !== undefined && s.length >= min && s.length <= max ? s : undefined;
      }
      let s = (typeof schema.format === 'string' && FORMATS[schema.format]) || 'example';
      while (s.length < min) s += 'x';
      return s.slice(0, max);
    }
    case 'integer':
    case 'number': {
      const lo = typeof schema.minimum === 'number' ? schema.minimum : typeof schema.exclusiveMinimum === 'number' ? schema.exclusiveMinimum + 1 : 1;
      const hi = typeof schema.maximum === 'number' ? schema.maximum : typeof schema.exclusiveMaximum === 'number' ? schema.exclusiveMaximum - 1 : Infinity;
      return Math.min(Math.max(lo, 1), hi);
    }
    case 'boolean':
      return true;
    case 'array': {
      const item = sample(schema.items, root, depth + 1);
      if (item === undefined) return [];
      const n = typeof schema.minItems === 'number' ? Math.max(1, schema.minItems) : 1;
      return Array.from({ length: n }, () => item);
    }
    case 'object': {
      const out: Record<string, unknown> = {};
      const required = new Set(Array.isArray(schema.required) ? schema.required : []);
      for (const [k, s] of Object.entries(isObj(schema.properties) ? schema.properties : {})) {
        if (!required.has(k) && depth > 2) continue;
        const v = sample(s, root, depth + 1);
        if (v !== undefined) out[k] = v;
      }
      return out;
    }
    default:
      return undefined;
  }
}

/** Representative arguments for a tool's input schema. */
export function sampleArguments(inputSchema: Schema): Record<string, unknown> {
  const v = sample(inputSchema, inputSchema);
  return isObj(v) ? v : {};
}
