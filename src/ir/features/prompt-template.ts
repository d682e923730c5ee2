/**
 * Build-time checks of prompt message templates (Handlebars): syntax, partials and helpers the
 * generated server does not have, and variables that are not arguments of the prompt. The
 * server renders with `noEscape` and `strict: false`, so an unknown variable renders empty:
 * worth a warning, not an error.
 */
import { handlebars } from '../../core/lazy.js';

/** What {@link checkPromptTemplate} found. */
export type TemplateCheck = {
  /** Why the template cannot be used (syntax error, partial, unknown helper); absent when usable. */
  error?: string;
  /** Variables the template reads from its context that are not declared arguments, sorted. */
  unknownVariables: string[];
};

/** Helpers Handlebars has built in that a prompt may use as blocks. */
const BLOCK_HELPERS = new Set(['if', 'unless', 'each', 'with']);
/** Built-in helpers that take parameters inline. */
const INLINE_HELPERS = new Set(['lookup', 'log']);
/** Blocks whose body renders in the same context (so its variables are arguments too). */
const SAME_CONTEXT = new Set(['if', 'unless']);

type Node = hbs.AST.Node;

/** Checks one message template against the prompt's declared argument names (`inlineHelpers`: further helpers the renderer registers, e.g. `json`). */
export function checkPromptTemplate(text: string, argumentNames: readonly string[], opts: { inlineHelpers?: readonly string[] } = {}): TemplateCheck {
  let program: hbs.AST.Program;
  try {
    program = handlebars().parse(text);
  } catch (err) {
    return { error: syntaxMessage(err), unknownVariables: [] };
  }
  const declared = new Set(argumentNames);
  const inline = new Set([...INLINE_HELPERS, ...(opts.inlineHelpers ?? [])]);
  const unknown = new Set<string>();
  let error: string | undefined;
  const fail = (message: string, node: Node) => {
    error ??= `${message} (line ${node.loc.start.line} of the template)`;
  };

  const variable = (e: hbs.AST.PathExpression, checkVars: boolean) => {
    if (!checkVars || e.data || e.depth > 0 || e.parts.length === 0) return;
    const name = e.parts[0]!;
    if (!declared.has(name)) unknown.add(name);
  };
  const expression = (e: Node, checkVars: boolean): void => {
    if (e.type === 'PathExpression') variable(e as hbs.AST.PathExpression, checkVars);
    else if (e.type === 'SubExpression') call(e as hbs.AST.SubExpression, checkVars, false);
  };
  const call = (c: { path: Node; params: Node[]; hash: hbs.AST.Hash }, checkVars: boolean, block: boolean) => {
    const name = c.path.type === 'PathExpression' ? (c.path as hbs.AST.PathExpression).original : '';
    const known = block ? BLOCK_HELPERS : inline;
    if (!known.has(name)) fail(`the helper "${name}" does not exist (available: ${[...known].join(', ')})`, c.path);
    for (const p of c.params) expression(p, checkVars);
    for (const pair of c.hash?.pairs ?? []) expression(pair.value, checkVars);
  };
  const program_ = (p: hbs.AST.Program | undefined, checkVars: boolean): void => {
    for (const s of p?.body ?? []) statement(s, checkVars);
  };
  const statement = (s: Node, checkVars: boolean): void => {
    switch (s.type) {
      case 'MustacheStatement': {
        const m = s as hbs.AST.MustacheStatement;
        if (m.params.length > 0 || (m.hash?.pairs.length ?? 0) > 0) call(m, checkVars, false);
        else expression(m.path, checkVars);
        return;
      }
      case 'BlockStatement': {
        const b = s as hbs.AST.BlockStatement;
        const name = b.path.original;
        if (BLOCK_HELPERS.has(name)) call(b, checkVars, true);
        else if (b.params.length > 0 || (b.hash?.pairs.length ?? 0) > 0) call(b, checkVars, true);
        else variable(b.path, checkVars); // a section over a context value: `{{#budget}}…{{/budget}}`
        const same = SAME_CONTEXT.has(name);
        program_(b.program, checkVars && same);
        program_(b.inverse, checkVars && (same || !BLOCK_HELPERS.has(name)));
        return;
      }
      case 'PartialStatement':
      case 'PartialBlockStatement':
        fail('partials (`{{> name}}`) are not available in prompt templates', s);
        return;
      case 'DecoratorBlock':
      case 'Decorator':
        fail('decorators (`{{* name}}`) are not available in prompt templates', s);
        return;
      default:
        return; // content and comments
    }
  };
  program_(program, true);
  const out: TemplateCheck = { unknownVariables: [...unknown].sort() };
  if (error !== undefined) out.error = error;
  return out;
}

/** Handlebars' multi-line parse error as one line: `Parse error on line 2: … Expecting …, got …`. */
function syntaxMessage(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  const lines = text.split('\n').filter((l) => l.trim() !== '' && !/^-*\^$/.test(l.trim()));
  if (lines.length <= 1) return lines[0] ?? 'invalid template';
  return `${lines[0]!.replace(/:$/, '')}: ${lines[lines.length - 1]}`;
}
