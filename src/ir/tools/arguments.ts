/**
 * Argument overrides (`overrides.<operation>.arguments.<name>`): hide an argument from the model
 * and have the server fill it from a constant or an environment variable, or give a visible one a
 * default, a description or another name. Applied to one operation's parts before its tool is
 * assembled, so the published schema, the `Args` type and everything checked against the tool's
 * arguments (gates, concern mappings) see the final arguments. The request keeps the wire names.
 * Argument rules (argument-rules.ts) reach a tool as the same override map.
 */
import { type Diagnostics, escapePointerToken, type Location } from '../../core/diagnostics.js';
import { isObject } from '../../core/json.js';
import { suggest } from '../../core/suggest.js';
import type { ArgumentOverride } from '../../manifest/types.gen.js';
import type { IrBody, IrParam, JsonSchema } from '../types.js';
import type { OperationParts } from './operation-tool.js';
import { X_MCP_HEADER, X_MCP_HEADER_TYPES } from './operation-tool.js';

/** Inputs of {@link applyArgumentOverrides}. */
export type ArgumentsInput = {
  parts: OperationParts;
  /** The override's `arguments`, keyed by generated argument name. */
  overrides: Record<string, ArgumentOverride>;
  /** `METHOD /path` of the operation, for messages. */
  operation: string;
  /** Manifest pointer of the `arguments` mapping. */
  at: string;
  /**
   * Fields written elsewhere than under `at` (an argument rule's): argument ⇒ override field ⇒
   * manifest pointer, so a problem with such a field points where it is written.
   */
  sources?: ReadonlyMap<string, ReadonlyMap<string, string>>;
  /** The server's own settings variables (`<PREFIX>_BASE_URL`, …), which cannot hold an argument. */
  reserved: ReadonlySet<string>;
  locateManifest: (pointer: string, opts?: { key?: boolean }) => Location;
  diagnostics: Diagnostics;
};

const ENV_NAME = /^[A-Z_][A-Z0-9_]*$/;
const ARG_NAME = /^[A-Za-z0-9_.-]{1,64}$/;
const VISIBLE_ONLY = ['default', 'description', 'name', 'header'] as const;

/** Returns `parts` with the argument overrides applied; problems go to `diagnostics`. */
export function applyArgumentOverrides(input: ArgumentsInput): OperationParts {
  const { parts, overrides, operation, diagnostics } = input;
  const targets = new Map<string, IrParam | IrBody>([...parts.params, ...(parts.body ? [parts.body] : [])].map((t) => [t.arg, t]));
  const locate = (arg: string, field?: string, key = false) => {
    const elsewhere = field === undefined ? undefined : input.sources?.get(arg)?.get(field);
    return input.locateManifest(elsewhere ?? `${input.at}/${escapePointerToken(arg)}${field ? `/${field}` : ''}`, { key });
  };
  const fail = (arg: string, field: string, message: string, help: string, key = false) =>
    diagnostics.error('MCPGEN_ARGUMENT_OVERRIDE_INVALID', message, help, locate(arg, field, key));

  // per generated argument name: what changes (Maps, so a parameter named `__proto__` is data)
  const fixed = new Map<string, NonNullable<IrParam['fixed']>>();
  const defaults = new Map<string, unknown>();
  const descriptions = new Map<string, string>();
  const renames = new Map<string, string>();
  const headers = new Map<string, string>();
  for (const arg of Object.keys(overrides)) {
    const o = overrides[arg];
    if (!isObject(o)) continue;
    if (!targets.has(arg)) {
      const near = suggest(arg, targets.keys());
      const known = [...targets.keys()];
      diagnostics.error(
        'MCPGEN_UNKNOWN_ARGUMENT',
        `${operation} has no argument "${arg}"`,
        near
          ? `did you mean "${near}"?`
          : known.length
            ? `its arguments are ${known.map((k) => `"${k}"`).join(', ')}`
            : 'the operation has no arguments; remove the entry',
        locate(arg, undefined, true),
      );
      continue;
    }
    const read = readArgumentOverride({
      arg,
      override: o,
      owner: operation,
      reserved: input.reserved,
      fail: (field, message, help, key) => fail(arg, field, message, help, key),
    });
    if (read.fixed) fixed.set(arg, read.fixed);
    if (Object.hasOwn(read, 'default')) defaults.set(arg, read.default);
    if (read.description !== undefined) descriptions.set(arg, read.description);
    if (read.name !== undefined) renames.set(arg, read.name);
    if (read.header !== undefined) headers.set(arg, read.header);
  }

  // names must stay unique across every argument, hidden ones included: the server fills those under their own name
  const finalName = (arg: string) => renames.get(arg) ?? arg;
  for (const [arg, name] of renames) {
    const others = [...targets.keys()].filter((a) => a !== arg && finalName(a) === name);
    if (others.length > 0) {
      const other = others[0]!;
      fail(
        arg,
        'name',
        `cannot rename argument "${arg}" of ${operation} to "${name}": argument "${other}" ${renames.has(other) ? 'is renamed to it too' : 'has that name'}`,
        'choose another name, or rename that argument too',
      );
      renames.delete(arg);
    }
  }

  const schema = parts.inputSchema;
  const properties = isObject(schema.properties) ? schema.properties : {};
  // `header`: the argument is mirrored as Mcp-Param-<header>; names must differ ignoring case, types be primitive
  const headerOf = (arg: string): string | undefined =>
    headers.get(arg) ??
    (isObject(properties[arg]) && typeof properties[arg][X_MCP_HEADER] === 'string' ? (properties[arg][X_MCP_HEADER] as string) : undefined);
  for (const [arg, header] of headers) {
    const prop = properties[arg];
    const type = isObject(prop) ? prop.type : undefined;
    const clash = Object.keys(properties).find((a) => a !== arg && !fixed.has(a) && headerOf(a)?.toLowerCase() === header.toLowerCase());
    if (typeof type !== 'string' || !X_MCP_HEADER_TYPES.has(type)) {
      fail(
        arg,
        'header',
        `argument "${arg}" of ${operation} cannot be mirrored as the Mcp-Param-${header} header: its schema's type is ${type === undefined ? 'not given' : JSON.stringify(type)}`,
        'only string, integer and boolean arguments can be (SEP-2243); remove `header`',
      );
      headers.delete(arg);
    } else if (clash !== undefined) {
      fail(
        arg,
        'header',
        `argument "${arg}" of ${operation} cannot be mirrored as the Mcp-Param-${header} header: argument "${clash}" is mirrored as ${headerOf(clash)}`,
        'header names must differ ignoring case; choose another',
      );
      headers.delete(arg);
    }
  }
  const entries: Array<[string, unknown]> = [];
  for (const [arg, prop] of Object.entries(properties)) {
    if (fixed.has(arg)) continue;
    let s = prop;
    if (descriptions.has(arg) || defaults.has(arg) || headers.has(arg)) {
      const patch: Record<string, unknown> = {};
      if (descriptions.has(arg)) patch.description = descriptions.get(arg);
      if (defaults.has(arg)) patch.default = defaults.get(arg);
      if (headers.has(arg)) patch[X_MCP_HEADER] = headers.get(arg);
      s = isObject(prop) ? { ...prop, ...patch } : patch;
    }
    entries.push([finalName(arg), s]);
  }
  const required = (Array.isArray(schema.required) ? (schema.required as string[]) : []).filter((r) => !fixed.has(r) && !defaults.has(r)).map(finalName);
  // same keywords in the same order; Object.fromEntries defines own properties, even for an argument named `__proto__`
  const inputSchema: JsonSchema = {};
  for (const k of Object.keys(schema)) {
    if (k === 'properties') inputSchema.properties = Object.fromEntries(entries);
    else if (k !== 'required') inputSchema[k] = schema[k];
    else if (required.length > 0) inputSchema.required = required;
  }

  const apply = <T extends IrParam | IrBody>(t: T): T => {
    const out: T = { ...t, arg: finalName(t.arg) };
    if (fixed.has(t.arg)) out.fixed = fixed.get(t.arg)!;
    if (defaults.has(t.arg)) out.default = defaults.get(t.arg);
    return out;
  };
  const result: OperationParts = { ...parts, inputSchema, params: parts.params.map(apply) };
  if (parts.body) result.body = apply(parts.body);
  return result;
}

/** What one argument override changes, once its fields are checked. */
export type ReadOverride = { fixed?: NonNullable<IrParam['fixed']>; default?: unknown; description?: string; name?: string; header?: string };

/**
 * Checks one argument override's fields against each other and returns what it changes; every
 * problem goes to `fail` with the field it is about (`key`: point at the field's key). `owner`
 * names what the argument belongs to in messages (`GET /pets`, or an argument rule).
 */
export function readArgumentOverride(input: {
  arg: string;
  override: ArgumentOverride;
  owner: string;
  reserved: ReadonlySet<string>;
  fail: (field: keyof ArgumentOverride, message: string, help: string, key?: boolean) => void;
}): ReadOverride {
  const { arg, override: o, owner: operation, fail } = input;
  const has = (k: keyof ArgumentOverride) => Object.hasOwn(o, k);
  const out: ReadOverride = {};
  if (o.hidden === true) {
    for (const k of VISIBLE_ONLY.filter(has))
      fail(k, `\`${k}\` does not apply to argument "${arg}" of ${operation}, which is hidden from the model`, `remove \`${k}\``, true);
    if (has('value') && has('env'))
      fail(
        'env',
        `hidden argument "${arg}" of ${operation} gives both \`value\` and \`env\``,
        'keep one: `value` for a constant, `env` for a value read from the environment',
        true,
      );
    else if (has('value')) {
      if (isJsonValue(o.value)) out.fixed = { value: o.value };
      else
        fail(
          'value',
          `\`value\` of argument "${arg}" of ${operation} is not a JSON value`,
          'use a string, a finite number, a boolean, null, or lists and mappings of those',
        );
    } else if (has('env')) {
      const env = o.env!;
      if (!ENV_NAME.test(env))
        fail(
          'env',
          `"${env}" is not a legal environment variable name`,
          'use upper-case letters, digits and `_`, not starting with a digit, e.g. `ACME_ACCOUNT_ID`',
        );
      else if (input.reserved.has(env))
        fail('env', `${env} is one of the server's own settings variables and cannot hold an argument`, 'choose another variable name');
      else out.fixed = { env };
    } else
      fail(
        'hidden',
        `hidden argument "${arg}" of ${operation} has neither \`value\` nor \`env\`, so the server has nothing to send`,
        'add `value: <constant>`, or `env: <VARIABLE>` to read it from the environment',
        true,
      );
    return out;
  }
  for (const k of (['value', 'env'] as const).filter(has)) {
    fail(
      k,
      `\`${k}\` of argument "${arg}" of ${operation} applies only to a hidden argument`,
      'add `hidden: true`, or use `default` for a value the model may change',
      true,
    );
  }
  if (has('default')) {
    if (isJsonValue(o.default)) out.default = o.default;
    else
      fail(
        'default',
        `\`default\` of argument "${arg}" of ${operation} is not a JSON value`,
        'use a string, a finite number, a boolean, null, or lists and mappings of those',
      );
  }
  if (o.description !== undefined) out.description = o.description;
  if (o.header !== undefined) out.header = o.header;
  if (o.name !== undefined && o.name !== arg) {
    if (ARG_NAME.test(o.name)) out.name = o.name;
    else fail('name', `"${o.name}" is not a legal argument name`, 'use letters, digits, `_`, `.` and `-`, at most 64 characters');
  }
  return out;
}

/** True for what JSON can carry (YAML also allows `.inf`, `.nan` and other values the server could not send). */
function isJsonValue(v: unknown): boolean {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return true;
  if (typeof v === 'number') return Number.isFinite(v);
  if (Array.isArray(v)) return v.every(isJsonValue);
  return isObject(v) && Object.getPrototypeOf(v) === Object.prototype && Object.values(v).every(isJsonValue);
}
