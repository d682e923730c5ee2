/**
 * RFC 6570 URI template syntax check (level 4), so a bad `uriTemplate` is a located build
 * error instead of a start-up crash of the generated server.
 */

/** Variables of a template (in order of first appearance), or why it is not a valid template. */
export type UriTemplateCheck = { variables: string[]; error?: undefined } | { error: string; variables?: undefined };

const OPERATORS = '+#./;?&';
const VARNAME = /^(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})(?:\.?(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2}))*$/;
const MODIFIER = /^(?::([1-9][0-9]{0,3})|\*)?$/;
// RFC 6570 §2.1: any Unicode character except CTL, SP, DQUOTE, "'", "%" (unless pct-encoded), "<", ">", "\", "^", "`", "{", "|", "}"
const LITERAL_BAD = /[\u0000-\u0020\u007f"'<>\\^`{|}]/;

/** Checks `template`; see {@link UriTemplateCheck}. */
export function checkUriTemplate(template: string): UriTemplateCheck {
  const variables: string[] = [];
  let i = 0;
  while (i < template.length) {
    const open = template.indexOf('{', i);
    const literal = template.slice(i, open === -1 ? undefined : open);
    const bad = literalProblem(literal);
    if (bad !== undefined) return { error: bad };
    if (open === -1) break;
    const close = template.indexOf('}', open);
    if (close === -1) return { error: `the expression starting at character ${open + 1} has no closing "}"` };
    const body = template.slice(open + 1, close);
    if (body.includes('{')) return { error: `an expression opened at character ${open + 1} contains "{"` };
    const op = body !== '' && OPERATORS.includes(body[0]!) ? body[0] : '';
    if (body !== '' && '=,!@|'.includes(body[0]!)) return { error: `the operator "${body[0]}" is reserved by RFC 6570` };
    const list = body.slice(op.length);
    if (list === '') return { error: `the expression {${body}} names no variable` };
    for (const spec of list.split(',')) {
      const m = /^([^:*]*)(.*)$/.exec(spec)!;
      const name = m[1]!;
      if (!VARNAME.test(name)) return { error: `"${name}" in {${body}} is not a valid variable name (letters, digits, "_", "." between them)` };
      if (!MODIFIER.test(m[2]!)) return { error: `"${m[2]}" in {${body}} is not a valid modifier (":<1-9999>" or "*")` };
      if (!variables.includes(name)) variables.push(name);
    }
    i = close + 1;
  }
  return { variables };
}

function literalProblem(literal: string): string | undefined {
  if (literal.includes('}')) return 'it has a "}" without an opening "{"';
  const bad = LITERAL_BAD.exec(literal);
  if (bad) return `it contains ${JSON.stringify(bad[0])} outside an expression`;
  if (/%(?![0-9A-Fa-f]{2})/.test(literal)) return 'it contains a "%" that does not start a percent-encoded byte';
  return undefined;
}
