/**
 * A description for a tool whose operation has neither summary nor description, so that no tool
 * is published with an empty one (which leaves the model guessing from the name alone).
 *
 * It is made of what the spec does say, in a fixed form:
 * `GET /repos/{owner}/{repo}/issues — list issues (tag: issues). Path parameters: owner, repo. Query: state, labels.`
 * - the method and path template;
 * - an action from the method and the path's last segment: `list <segment>` for a GET of a
 *   plural collection, `get one of <segment>` when the path ends in a parameter, else
 *   `get`, `create in`, `send to`, `replace`, `update`, `delete`, `check` (HEAD);
 * - the operation's tags;
 * - the arguments the model sees (hidden ones left out, renamed ones by their new name), by
 *   where they travel, and the body's media type.
 * The same operation always gets the same text; it is cut to `maxLength`.
 */
import type { HttpMethod, IrBody, IrParam, ParamLocation } from '../types.js';

/** What {@link synthesizeDescription} reads: the tool as built (final argument names). */
export type DescribeInput = {
  method: HttpMethod;
  path: string;
  tags: readonly string[];
  params: readonly IrParam[];
  body?: IrBody;
  deprecated: boolean;
  /** The manifest's `maxDescriptionLength`. */
  maxLength: number;
};

const LABELS: Record<ParamLocation, string> = { path: 'Path parameters', query: 'Query', header: 'Headers', cookie: 'Cookies' };

/** The synthesised description of an operation (see the module comment). */
export function synthesizeDescription(input: DescribeInput): string {
  const sentences = [`${input.method} ${input.path} — ${action(input.method, input.path)}${tagText(input.tags)}.`];
  for (const loc of ['path', 'query', 'header', 'cookie'] as const) {
    const args = input.params.filter((p) => p.in === loc && p.fixed === undefined).map((p) => p.arg);
    if (args.length > 0) sentences.push(`${LABELS[loc]}: ${args.join(', ')}.`);
  }
  const body = input.body;
  if (body && body.fixed === undefined) {
    const kind = body.binary ? `a file (${body.contentType})` : body.contentType;
    sentences.push(`Body${body.arg === 'body' ? '' : ` (${body.arg})`}: ${kind}${body.required ? '' : ', optional'}.`);
  }
  const text = (input.deprecated ? '[deprecated] ' : '') + sentences.join(' ');
  return cut(text.replace(/\s+/g, ' '), input.maxLength);
}

/** The action phrase: a verb from the method and the path's last literal segment. */
function action(method: HttpMethod, path: string): string {
  // segments without a file extension (`Addresses.json`, `{Sid}.json`)
  const segments = path
    .split('/')
    .map((s) => s.replace(/\.(json|xml|ya?ml|txt|csv)$/i, ''))
    .filter(Boolean);
  const isParam = (s: string) => /^\{[^}]*\}$/.test(s);
  const item = segments.length > 0 && isParam(segments[segments.length - 1]!);
  const noun = [...segments].reverse().find((s) => !isParam(s));
  if (noun === undefined) return `${VERBS[method].other} the API root`;
  if (item) return `${VERBS[method].item} ${noun}`;
  // plural-looking collections: `issues`, `logs`; not `status`, `access`, `analysis`
  const plural = /[^sui]s$/i.test(noun);
  return `${plural ? VERBS[method].collection : VERBS[method].other} ${noun}`;
}

const VERBS: Record<HttpMethod, { collection: string; item: string; other: string }> = {
  GET: { collection: 'list', item: 'get one of', other: 'get' },
  POST: { collection: 'create in', item: 'send to one of', other: 'send to' },
  PUT: { collection: 'replace', item: 'replace one of', other: 'replace' },
  PATCH: { collection: 'update', item: 'update one of', other: 'update' },
  DELETE: { collection: 'delete', item: 'delete one of', other: 'delete' },
  HEAD: { collection: 'check', item: 'check one of', other: 'check' },
  OPTIONS: { collection: 'options of', item: 'options of one of', other: 'options of' },
  TRACE: { collection: 'trace', item: 'trace one of', other: 'trace' },
};

function tagText(tags: readonly string[]): string {
  if (tags.length === 0) return '';
  return ` (${tags.length === 1 ? 'tag' : 'tags'}: ${tags.join(', ')})`;
}

/** `text` cut to `max` characters at the last `, ` or `. ` that leaves at least half, marked with `…`. */
function cut(text: string, max: number): string {
  if (!(text.length > max)) return text;
  const room = text.slice(0, Math.max(0, max - 1));
  const at = Math.max(room.lastIndexOf(', '), room.lastIndexOf('. ') + 1);
  return (at >= max / 2 ? room.slice(0, at) : room).trimEnd() + '…';
}
