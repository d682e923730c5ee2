/**
 * include / exclude: which operations become tools.
 *
 * A selector matches an operation when every field it gives matches (AND); a field with a list
 * matches when any value does (OR); `deprecated: true|false` matches on the operation's flag. An operation is kept when `include` is absent or one of its
 * selectors matches, and no `exclude` selector matches (exclude wins). Selectors that name a
 * tag or operationId the spec does not have are errors; path globs that match nothing warn.
 */
import picomatch from 'picomatch';
import type { Diagnostics, Location } from '../../core/diagnostics.js';
import { suggest } from '../../core/suggest.js';
import type { RawOperation } from '../../openapi/operations.js';

/** One selector as written in the manifest (fields may be one value or a list). */
export type SelectorInput = {
  tag?: string | string[];
  operationId?: string | string[];
  path?: string | string[];
  method?: string | string[];
  deprecated?: boolean;
};

/** Inputs of {@link selectOperations}. */
export type SelectOptions = {
  ops: readonly RawOperation[];
  tags: ReadonlySet<string>;
  include?: readonly SelectorInput[];
  exclude?: readonly SelectorInput[];
  /** Locates a manifest pointer. */
  locate: (pointer: string) => Location;
  diagnostics: Diagnostics;
};

const list = (v: string | string[] | undefined): string[] | undefined => (v === undefined ? undefined : Array.isArray(v) ? v : [v]);

type Compiled = { tag?: string[]; operationId?: string[]; path?: Array<(p: string) => boolean>; method?: string[]; deprecated?: boolean };

function compile(s: SelectorInput): Compiled {
  const c: Compiled = {};
  const tag = list(s.tag);
  const operationId = list(s.operationId);
  const path = list(s.path);
  const method = list(s.method);
  if (tag) c.tag = tag;
  if (operationId) c.operationId = operationId;
  // braces are literal in OpenAPI path templates, so brace expansion is off
  if (path) c.path = path.map((g) => picomatch(g, { nobrace: true, dot: true }));
  if (method) c.method = method.map((m) => m.toLowerCase());
  if (typeof s.deprecated === 'boolean') c.deprecated = s.deprecated;
  return c;
}

function matches(c: Compiled, op: RawOperation): boolean {
  if (c.tag && !c.tag.some((t) => op.tags.includes(t))) return false;
  if (c.operationId && !(op.operationId !== undefined && c.operationId.includes(op.operationId))) return false;
  if (c.path && !c.path.some((m) => m(op.path))) return false;
  if (c.method && !c.method.includes(op.method)) return false;
  if (c.deprecated !== undefined && c.deprecated !== op.deprecated) return false;
  return true;
}

/** A selector as a test of one operation (argument rules' `match` uses it too). */
export function selectorMatcher(s: SelectorInput): (op: RawOperation) => boolean {
  const c = compile(s);
  return (op) => matches(c, op);
}

/** What {@link checkSelector} checks a selector against. */
export type SelectorContext = { ops: readonly RawOperation[]; tags: ReadonlySet<string>; locate: (pointer: string) => Location; diagnostics: Diagnostics };

/**
 * Reports the fields of one selector that name nothing: a tag or operationId the spec does not
 * have (errors), a path glob no operation matches (warning). `at` is the selector's pointer and
 * `label` names it in messages (`include`, `arguments[0].match`).
 */
export function checkSelector(s: SelectorInput, at: string, label: string, ctx: SelectorContext): void {
  const { ops, tags, locate, diagnostics } = ctx;
  const each = (field: 'tag' | 'operationId' | 'path', fn: (value: string, ptr: string) => void) => {
    const raw = s[field];
    if (raw === undefined) return;
    if (Array.isArray(raw)) raw.forEach((v, j) => fn(v, `${at}/${field}/${j}`));
    else fn(raw, `${at}/${field}`);
  };
  each('tag', (v, ptr) => {
    if (tags.has(v)) return;
    const near = suggest(v, tags);
    diagnostics.error(
      'MCPGEN_UNKNOWN_TAG',
      `${label} names tag "${v}", which no operation has`,
      near ? `did you mean "${near}"?` : `known tags: ${[...tags].sort().join(', ') || '(none)'}`,
      locate(ptr),
    );
  });
  each('operationId', (v, ptr) => {
    if (ops.some((o) => o.operationId === v)) return;
    const near = suggest(
      v,
      ops.flatMap((o) => (o.operationId ? [o.operationId] : [])),
    );
    diagnostics.error(
      'MCPGEN_UNKNOWN_OPERATION',
      `${label} names operationId "${v}", which the spec does not have`,
      near ? `did you mean "${near}"?` : 'check the operationId in the OpenAPI document',
      locate(ptr),
    );
  });
  each('path', (v, ptr) => {
    const m = picomatch(v, { nobrace: true, dot: true });
    if (ops.some((o) => m(o.path))) return;
    diagnostics.warn(
      'MCPGEN_UNMATCHED_PATH',
      `${label} path glob "${v}" matches no operation`,
      '`*` matches within one path segment, `**` across segments; paths start with `/`',
      locate(ptr),
    );
  });
}

/** Applies include/exclude and reports selectors that name nothing. */
export function selectOperations(opts: SelectOptions): RawOperation[] {
  const ctx: SelectorContext = { ops: opts.ops, tags: opts.tags, locate: opts.locate, diagnostics: opts.diagnostics };
  opts.include?.forEach((s, i) => checkSelector(s, `/include/${i}`, 'include', ctx));
  opts.exclude?.forEach((s, i) => checkSelector(s, `/exclude/${i}`, 'exclude', ctx));
  const inc = opts.include?.map(compile);
  const exc = opts.exclude?.map(compile) ?? [];
  return opts.ops.filter((op) => (!inc || inc.some((c) => matches(c, op))) && !exc.some((c) => matches(c, op)));
}
