/**
 * Argument rules (top-level `arguments`): one entry changes one argument on every tool that has
 * it, of the operations its `match` selects (every operation by default). A rule's fields are
 * checked once, where it is written; per tool, the rules that reach it are merged with the tool's
 * own `overrides.<operation>.arguments` (which win, field by field) into the very override map
 * {@link applyArgumentOverrides} applies, so a rule guarantees what a per-operation override does.
 *
 * Fields, for precedence and conflicts: `hidden` (with `value`/`env`), `default`, `description`
 * and `as`. A rule that hides an argument sets all four (nothing else may be said of a hidden
 * argument). Two rules setting one field of one argument of one tool are an error naming both.
 */
import type { Diagnostics, Location } from '../../core/diagnostics.js';
import { isObject } from '../../core/json.js';
import { suggest } from '../../core/suggest.js';
import type { ArgumentOverride, ArgumentRule } from '../../manifest/types.gen.js';
import type { RawOperation } from '../../openapi/operations.js';
import type { IrArgumentRuleUse, IrFixedValue, JsonSchema } from '../types.js';
import { type ArgumentsInput, readArgumentOverride } from './arguments.js';
import type { OperationParts } from './operation-tool.js';
import { checkSelector, selectorMatcher } from './select.js';

/** A field of a rule, as precedence and conflicts see it. */
type Field = 'hidden' | 'default' | 'description' | 'as';
const FIELDS: readonly Field[] = ['hidden', 'default', 'description', 'as'];
/** The override keys each field stands for (`as` is a per-operation override's `name`). */
const KEYS: Record<Field, ReadonlyArray<keyof ArgumentOverride>> = {
  hidden: ['hidden', 'value', 'env'],
  default: ['default'],
  description: ['description'],
  as: ['name'],
};

/** Inputs of {@link ArgumentRules}. */
export type ArgumentRulesInput = {
  rules: readonly ArgumentRule[];
  /** Every operation of the spec (selectors are checked against all of them, as include/exclude are). */
  ops: readonly RawOperation[];
  tags: ReadonlySet<string>;
  /** The server's own settings variables, which cannot hold an argument. */
  reserved: ReadonlySet<string>;
  locateManifest: (pointer: string, opts?: { key?: boolean }) => Location;
  diagnostics: Diagnostics;
};

/** One checked rule and what it did. */
type Rule = {
  index: number;
  /** Pointer of the rule. */
  at: string;
  arg: string;
  /** The rule as a per-operation override (`as` under `name`). */
  override: ArgumentOverride;
  /** The fields it sets; all of them when it hides. */
  fields: Field[];
  matches: (op: RawOperation) => boolean;
  /** Its `match` is already in error: no warning that it changed nothing. */
  quiet: boolean;
  /** Whether `match` selected any tool; the arguments of the tools it selected (for a suggestion). */
  selected: boolean;
  argsSeen: Set<string>;
  /** Tools it selected that have the argument, and those it changed. */
  had: number;
  tools: string[];
};

/** What the rules do to one tool: its argument overrides (with where rule fields are written), and the body fields they hide. */
export type ToolRules = Pick<ArgumentsInput, 'overrides' | 'sources'> & { bodyFields: ReadonlyMap<string, IrFixedValue> };

/** Two rules that set one field of one argument, and the tools they both reach. */
type Conflict = { first: Rule; second: Rule; field: Field; tools: string[] };

/** The rules of a manifest, applied tool by tool during the IR build. */
export class ArgumentRules {
  readonly #rules: Rule[] = [];
  readonly #conflicts = new Map<string, Conflict>();
  readonly #input: ArgumentRulesInput;

  constructor(input: ArgumentRulesInput) {
    this.#input = input;
    input.rules.forEach((raw, index) => {
      if (!isObject(raw) || typeof raw.name !== 'string') return;
      const rule = this.#check(raw, index);
      if (rule) this.#rules.push(rule);
    });
  }

  /** Checks one rule where it is written; undefined when it cannot be applied. */
  #check(raw: ArgumentRule, index: number): Rule | undefined {
    const { diagnostics, locateManifest } = this.#input;
    const at = `/arguments/${index}`;
    const label = `arguments[${index}]`;
    let ok = true;
    const before = diagnostics.items.length;
    if (isObject(raw.match)) checkSelector(raw.match, `${at}/match`, `${label}.match`, { ...this.#input, locate: (p) => locateManifest(p) });
    // a `match` naming what the spec does not have already explains why the rule reaches no tool
    const quiet = diagnostics.items.slice(before).some((d) => d.severity === 'error');
    const override: ArgumentOverride = {};
    for (const k of ['hidden', 'value', 'env', 'default', 'description'] as const) if (Object.hasOwn(raw, k)) override[k] = raw[k] as never;
    if (raw.as !== undefined) override.name = raw.as;
    readArgumentOverride({
      arg: raw.name,
      override,
      owner: label,
      reserved: this.#input.reserved,
      fail: (field, message, help, key) => {
        ok = false;
        diagnostics.error('MCPGEN_ARGUMENT_OVERRIDE_INVALID', message, help, locateManifest(`${at}/${field === 'name' ? 'as' : field}`, { key: key === true }));
      },
    });
    // `hidden: false` says nothing; `as` with the argument's own name neither
    const fields =
      override.hidden === true
        ? [...FIELDS]
        : FIELDS.filter((f) => f !== 'hidden' && KEYS[f].some((k) => Object.hasOwn(override, k)) && !(f === 'as' && override.name === raw.name));
    if (ok && fields.length === 0) {
      ok = false;
      diagnostics.error(
        'MCPGEN_ARGUMENT_OVERRIDE_INVALID',
        `argument rule ${label} changes nothing about argument "${raw.name}"`,
        'give it `hidden: true` with `value` or `env`, a `default`, a `description` or `as`, or remove it',
        locateManifest(at),
      );
    }
    if (!ok) return undefined;
    return {
      index,
      at,
      arg: raw.name,
      override,
      fields,
      matches: isObject(raw.match) ? selectorMatcher(raw.match) : () => true,
      quiet,
      selected: false,
      argsSeen: new Set(),
      had: 0,
      tools: [],
    };
  }

  /**
   * The override map of one tool: its own `arguments` (unchanged, first) and, for each argument
   * a rule reaches, the fields the tool's own entry does not set; with where each rule field is
   * written, for {@link applyArgumentOverrides}. Undefined when neither has anything.
   */
  forTool(tool: {
    op: RawOperation;
    name: string;
    args: readonly string[];
    bodyFields: readonly string[];
    own: Record<string, ArgumentOverride> | undefined;
  }): ToolRules | undefined {
    const own = tool.own ?? {};
    const bodyFields = new Map<string, IrFixedValue>();
    const overrides: Record<string, ArgumentOverride> = {};
    const sources = new Map<string, Map<string, string>>();
    for (const arg of Object.keys(own)) Object.defineProperty(overrides, arg, { value: own[arg], enumerable: true, writable: true, configurable: true });
    // argument ⇒ field ⇒ the rule that set it on this tool
    const claimed = new Map<string, Map<Field, Rule>>();
    const bodyRule = new Map<string, Rule>();
    for (const rule of this.#rules) {
      if (!rule.matches(tool.op)) continue;
      rule.selected = true;
      for (const a of tool.args) rule.argsSeen.add(a);
      // a rule that hides also hides a top-level field of that name in an object body (Slack takes `token` as a form field)
      const field = rule.override.hidden === true && tool.bodyFields.includes(rule.arg) && !tool.args.includes(rule.arg);
      if (field) {
        rule.had++;
        const first = bodyRule.get(rule.arg);
        if (first) this.#conflict(first, rule, 'hidden', tool.name);
        else {
          bodyRule.set(rule.arg, rule);
          bodyFields.set(rule.arg, rule.override.env !== undefined ? { env: rule.override.env } : { value: rule.override.value });
          rule.tools.push(tool.name);
        }
        continue;
      }
      if (!tool.args.includes(rule.arg)) continue;
      rule.had++;
      const mine = Object.hasOwn(own, rule.arg) && isObject(own[rule.arg]) ? own[rule.arg]! : undefined;
      // a tool's own entry wins: a field it sets (all of them when it hides the argument) is its
      const ownSets = (f: Field) => mine !== undefined && KEYS[f].some((k) => Object.hasOwn(mine, k));
      // …and a rule that hides gives way whole to an entry that hides, fills or shows the argument itself
      const yields = mine?.hidden === true || (rule.override.hidden === true && ownSets('hidden'));
      const open = yields ? [] : rule.fields.filter((f) => !ownSets(f));
      const claims = claimed.get(rule.arg) ?? new Map<Field, Rule>();
      claimed.set(rule.arg, claims);
      // a rule in conflict on this tool changes nothing there (the build fails on the error anyway)
      const taken = open.find((f) => claims.has(f));
      if (taken !== undefined) {
        this.#conflict(claims.get(taken)!, rule, taken, tool.name);
        continue;
      }
      // the fields a hiding rule claims but has no key for (`default`, …) change nothing by themselves
      if (!open.some((f) => KEYS[f].some((k) => Object.hasOwn(rule.override, k)))) continue;
      const target: ArgumentOverride = Object.hasOwn(overrides, rule.arg) ? { ...overrides[rule.arg] } : {};
      const from = sources.get(rule.arg) ?? new Map<string, string>();
      for (const f of open) {
        claims.set(f, rule);
        for (const k of KEYS[f]) {
          if (!Object.hasOwn(rule.override, k)) continue;
          target[k] = rule.override[k] as never;
          from.set(k, `${rule.at}/${k === 'name' ? 'as' : k}`);
        }
      }
      Object.defineProperty(overrides, rule.arg, { value: target, enumerable: true, writable: true, configurable: true });
      sources.set(rule.arg, from);
      rule.tools.push(tool.name);
    }
    if (Object.keys(overrides).length === 0 && bodyFields.size === 0) return undefined;
    return { overrides, sources, bodyFields };
  }

  #conflict(first: Rule, second: Rule, field: Field, tool: string): void {
    // one error per pair of rules and argument, whichever fields and tools they share
    const key = `${first.index}/${second.index}`;
    const c = this.#conflicts.get(key) ?? { first, second, field, tools: [] };
    if (!c.tools.includes(tool)) c.tools.push(tool);
    this.#conflicts.set(key, c);
  }

  /** Reports rules that changed no tool and rules in conflict; returns what each rule did, in manifest order. */
  finish(): IrArgumentRuleUse[] {
    const { diagnostics, locateManifest } = this.#input;
    for (const rule of this.#rules) {
      if (rule.had > 0 || rule.quiet) continue;
      const label = `arguments[${rule.index}]`;
      if (!rule.selected) {
        const hasMatch = this.#input.rules[rule.index]?.match !== undefined;
        diagnostics.warn(
          'MCPGEN_ARGUMENT_RULE_UNMATCHED',
          `argument rule ${label} (argument "${rule.arg}") applies to no tool: ${hasMatch ? "its `match` selects none of the server's tools" : 'the server has no operation tools'}`,
          hasMatch
            ? 'widen `match` (it takes the fields of an `include` selector; the operations `include`/`exclude` leave out are not tools), or remove the rule'
            : 'remove the rule',
          locateManifest(hasMatch ? `${rule.at}/match` : rule.at, { key: hasMatch }),
        );
        continue;
      }
      const near = suggest(rule.arg, rule.argsSeen);
      diagnostics.warn(
        'MCPGEN_ARGUMENT_RULE_UNMATCHED',
        `argument rule ${label} applies to no tool: none of the tools it matches has an argument "${rule.arg}"`,
        near
          ? `did you mean "${near}"?`
          : "arguments are named as generated (the names in a tool's input schema, `body` for a request body): fix `name` or `match`, or remove the rule",
        locateManifest(`${rule.at}/name`),
      );
    }
    for (const { first, second, field, tools } of this.#conflicts.values()) {
      const line = locateManifest(first.at).line;
      const shown = tools.slice(0, 3).join(', ') + (tools.length > 3 ? ` and ${tools.length - 3} more` : '');
      const hides =
        first.override.hidden === true
          ? ` (arguments[${first.index}] hides it)`
          : second.override.hidden === true
            ? ` (arguments[${second.index}] hides it)`
            : '';
      diagnostics.error(
        'MCPGEN_ARGUMENT_RULE_CONFLICT',
        `argument rules arguments[${first.index}]${line > 0 ? ` (line ${line})` : ''} and arguments[${second.index}] both set \`${field}\` of argument "${first.arg}"${hides} on ${tools.length} tool${tools.length === 1 ? '' : 's'}: ${shown}`,
        "set each field of an argument in one rule: narrow one rule's `match` so they do not overlap, or give the tools that need something else `overrides.<operation>.arguments`",
        locateManifest(`${second.at}/${second.override.hidden === true ? 'hidden' : field}`, { key: true }),
      );
    }
    return this.#rules.map((r) => {
      const use: IrArgumentRuleUse = { index: r.index, name: r.arg, sets: r.override.hidden === true ? ['hidden'] : r.fields, tools: r.tools };
      if (r.override.hidden === true) use.fill = r.override.env !== undefined ? { env: r.override.env } : 'value';
      if (r.override.name !== undefined) use.as = r.override.name;
      return use;
    });
  }
}

/** The body property that carries the body's own fields, when it is an object schema written inline (not a `$ref`). */
function bodySchema(parts: OperationParts): JsonSchema | undefined {
  const props = parts.inputSchema.properties;
  if (!parts.body || parts.body.binary || parts.body.fixed || !isObject(props)) return undefined;
  const schema = props[parts.body.arg];
  return isObject(schema) && isObject(schema.properties) ? schema : undefined;
}

/** The top-level fields of a tool's object body (see {@link hideBodyFields}). */
export function bodyFieldNames(parts: OperationParts): string[] {
  const schema = bodySchema(parts);
  return schema ? Object.keys(schema.properties as object) : [];
}

/** `parts` with the body fields in `fields` gone from the body's schema (and its `required`) and set on the body. */
export function hideBodyFields(parts: OperationParts, fields: ReadonlyMap<string, IrFixedValue>): OperationParts {
  const schema = bodySchema(parts);
  if (!schema || fields.size === 0) return parts;
  const properties = Object.fromEntries(Object.entries(schema.properties as object).filter(([k]) => !fields.has(k)));
  const required = Array.isArray(schema.required) ? (schema.required as string[]).filter((r) => !fields.has(r)) : undefined;
  const next: JsonSchema = {};
  for (const k of Object.keys(schema)) {
    if (k === 'properties') next.properties = properties;
    else if (k !== 'required') next[k] = schema[k];
    else if (required && required.length > 0) next.required = required;
  }
  const arg = parts.body!.arg;
  const inputProps = Object.fromEntries(Object.entries(parts.inputSchema.properties as object).map(([k, v]) => [k, k === arg ? next : v]));
  return {
    ...parts,
    inputSchema: { ...parts.inputSchema, properties: inputProps },
    body: { ...parts.body!, fields: [...fields].map(([name, fixed]) => ({ name, fixed })) },
  };
}
