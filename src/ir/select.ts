/**
 * include / exclude: which operations become tools.
 *
 * A selector matches an operation when every field it gives matches (AND); a field with a list
 * matches when any value does (OR); `deprecated: true|false` matches on the operation's flag. An operation is kept when `include` is absent or one of its
 * selectors matches, and no `exclude` selector matches (exclude wins). Selectors that name a
 * tag or operationId the spec does not have are errors; path globs that match nothing warn.
 */
import picomatch from 'picomatch';
import type { Diagnostics, Location } from '../diagnostics.js';
import type { RawOperation } from '../openapi/operations.js';
import { suggest } from '../suggest.js';

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

/** Applies include/exclude and reports selectors that name nothing. */
export function selectOperations(opts: SelectOptions): RawOperation[] {
  const { ops, tags, locate, diagnostics } = opts;
  const operationIds = new Set(ops.flatMap((o) => (o.operationId ? [o.operationId] : [])));
  const check = (key: 'include' | 'exclude', selectors: readonly SelectorInput[]) => {
    selectors.forEach((s, i) => {
      const each = (field: 'tag' | 'operationId' | 'path', fn: (value: string, ptr: string) => void) => {
        const raw = s[field];
        if (raw === undefined) return;
        if (Array.isArray(raw)) raw.forEach((v, j) => fn(v, `/${key}/${i}/${field}/${j}`));
        else fn(raw, `/${key}/${i}/${field}`);
      };
      each('tag', (v, ptr) => {
        if (tags.has(v)) return;
        const near = suggest(v, tags);
        diagnostics.error('MCPGEN_UNKNOWN_TAG', `${key} names tag "${v}", which no operation has`, near ? `did you mean "${near}"?` : `known tags: ${[...tags].sort().join(', ') || '(none)'}`, locate(ptr));
      });
      each('operationId', (v, ptr) => {
        if (operationIds.has(v)) return;
        const near = suggest(v, operationIds);
        diagnostics.error('MCPGEN_UNKNOWN_OPERATION', `${key} names operationId "${v}", which the spec does not have`, near ? `did you mean "${near}"?` : 'check the operationId in the OpenAPI document', locate(ptr));
      });
      each('path', (v, ptr) => {
        const m = picomatch(v, { nobrace: true, dot: true });
        if (ops.some((o) => m(o.path))) return;
        diagnostics.warn('MCPGEN_UNMATCHED_PATH', `${key} path glob "${v}" matches no operation`, '`*` matches within one path segment, `**` across segments; paths start with `/`', locate(ptr));
      });
    });
  };
  if (opts.include) check('include', opts.include);
  if (opts.exclude) check('exclude', opts.exclude);
  const inc = opts.include?.map(compile);
  const exc = opts.exclude?.map(compile) ?? [];
  return ops.filter((op) => (!inc || inc.some((c) => matches(c, op))) && !exc.some((c) => matches(c, op)));
}
