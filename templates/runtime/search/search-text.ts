/**
 * The words of search mode: how a tool's text and a query become index terms (the same function on
 * both sides, at build time and at run time), and the query's intent. Pure: it imports only the
 * Porter stemmer (`stemmer`).
 *
 * This file is copied into generated projects that use search mode.
 */
import { stemmer } from 'stemmer';

/** Words too common in requests and API descriptions to tell tools apart. */
const STOP = new Set(
  'a about after again also an and another any anything are as at back be been before but by can could do does down each even ever for from has have here how i if in into is it its just let like me more most my need no not now of off on one only or other our out over please same should so some someone something still than that the their them then there these this those to too up us very via want was way we what when where which who will with would yet you your'.split(
    ' ',
  ),
);

/**
 * The words of a name or text: HTML tags, Markdown link targets and URLs dropped; camelCase
 * (`PostCustomersCustomer`, `HTTPServer`), `snake_case`, `kebab-case`, dots and path separators
 * split apart; lower case.
 */
export function words(text: string): string[] {
  return text
    .replace(/<[^>]*>/g, ' ')
    .replace(/\]\([^)]*\)/g, ' ')
    .replace(/https?:\/\/\S+/g, ' ')
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z]{2,})/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length > 0 && w.length <= 40);
}

/** The index term of a word: stop words and single letters dropped, Porter-stemmed. */
export function term(word: string): string | null {
  if (word.length < 2 || STOP.has(word)) return null;
  const t = stemmer(word);
  return STOP.has(t) ? null : t;
}

/** The terms of `text` in order (repeats kept: term frequency counts). */
export function terms(text: string): string[] {
  const out: string[] = [];
  for (const w of words(text)) {
    const t = term(w);
    if (t !== null) out.push(t);
  }
  return out;
}

/** The term of a phrase of several words (a WordNet collocation such as `tear down`): the stems joined by `_`. */
export function phraseTerm(parts: readonly string[]): string {
  return parts.map((p) => stemmer(p)).join('_');
}

/** What an operation does, from its method and the shape of its path; what a query asks for. */
export type Intent = 'list' | 'read' | 'create' | 'update' | 'delete';

/**
 * Verbs and question words that say what a request wants done. General English for acting on a
 * resource (the verbs of CRUD and their everyday variants), not any API's vocabulary.
 */
const INTENT_WORDS: Record<Intent, readonly string[]> = {
  list: ['list', 'lists', 'listing', 'which', 'enumerate', 'browse', 'every', 'all', 'many', 'search', 'find', 'history', 'recent'],
  read: [
    'get',
    'show',
    'view',
    'read',
    'fetch',
    'see',
    'look',
    'lookup',
    'details',
    'detail',
    'info',
    'inspect',
    'describe',
    'check',
    'status',
    'retrieve',
    'download',
    'tail',
    'export',
    'preview',
  ],
  create: [
    'create',
    'add',
    'new',
    'make',
    'open',
    'start',
    'register',
    'submit',
    'post',
    'launch',
    'provision',
    'generate',
    'invite',
    'upload',
    'set up',
    'spin up',
    'send',
    'publish',
    'raise',
    'write',
    'draft',
    'compose',
    'propose',
    'store',
    'save',
    'reserve',
    'deploy',
    'schedule',
    'book',
    'attach',
    'put',
    'bill',
    'charge',
    'text',
    'dial',
    'ring',
    'mint',
    'define',
    'trigger',
    'kick off',
    'run',
  ],
  update: [
    'update',
    'change',
    'edit',
    'modify',
    'rename',
    'set',
    'replace',
    'patch',
    'toggle',
    'enable',
    'disable',
    'turn',
    'switch',
    'resize',
    'scale',
    'adjust',
    'move',
    'mark',
    'configure',
    'close',
    'reopen',
    'lock',
    'unlock',
    'archive',
    'pause',
    'resume',
    'suspend',
    'approve',
    'assign',
    'grow',
    'shrink',
    'upgrade',
    'downgrade',
    'hang up',
    'redact',
    'fix',
    'point',
    'promote',
    'follow',
    'star',
  ],
  delete: [
    'delete',
    'remove',
    'erase',
    'wipe',
    'destroy',
    'drop',
    'purge',
    'discard',
    'uninstall',
    'revoke',
    'tear down',
    'get rid',
    'kill',
    'clear',
    'unregister',
    'deregister',
    'cancel',
    'release',
    'retire',
    'unlink',
    'detach',
    'evict',
    'kick out',
    'terminate',
    'stop',
  ],
};

/** Intent words by first word, longest phrase first. */
const INTENT_INDEX: Map<string, Array<{ phrase: string[]; intent: Intent }>> = (() => {
  const m = new Map<string, Array<{ phrase: string[]; intent: Intent }>>();
  for (const [intent, list] of Object.entries(INTENT_WORDS) as Array<[Intent, readonly string[]]>) {
    for (const w of list) {
      const phrase = w.split(' ');
      const at = m.get(phrase[0]!) ?? [];
      at.push({ phrase, intent });
      at.sort((a, b) => b.phrase.length - a.phrase.length);
      m.set(phrase[0]!, at);
    }
  }
  return m;
})();

/**
 * The intent of a query: a question about what exists ("which X are there", "what X are
 * running", "how many X", "all X", "who is in X") is a list; "how much" and "what is" read; else
 * its first intent word (or phrase) decides. Undefined when the query says none.
 */
export function queryIntent(query: string): Intent | undefined {
  const ws = words(query);
  const text = ` ${ws.join(' ')} `;
  const destructive = / (delete|remove|erase|wipe|destroy|purge|cancel) /.test(text);
  if (
    !destructive &&
    (/ (what|which) (\w+ ){1,4}(are|exist|do i have|have i|running|there) /.test(text) || / how many /.test(text) || / (all|every) /.test(text))
  )
    return 'list';
  // "who is in the org", "who starred it": the people are a list; "who am I" reads one
  if (/^ who /.test(text) && !/^ who am i /.test(text)) return 'list';
  // "how much X is left", "what is the status of": a read
  if (/^ (how much|what is|what s|whats) /.test(text)) return 'read';
  for (let i = 0; i < ws.length; i++) {
    for (const { phrase, intent } of INTENT_INDEX.get(ws[i]!) ?? []) {
      if (!phrase.every((p, j) => ws[i + j] === p)) continue;
      // after a determiner the word is a noun: "refund a charge", "the latest run"
      if (i > 0 && DETERMINERS.has(ws[i - 1]!)) continue;
      // "get the logs", "show recordings": reading what is plural lists it
      if (intent === 'read' && plural(objectOf(ws, i + phrase.length))) return 'list';
      return intent;
    }
  }
  // "unwatch", "unfollow", "unlink": undoing a relation deletes it
  for (const w of ws)
    if (/^un[a-z]{3,}$/.test(w) && !/^(under|until|unless|uniq|univers|unit|unknown|unread|unused|unusual|unlimited|unpaid|unsure)/.test(w)) return 'delete';
  return undefined;
}

/** Words after which a verb-like word is a noun. */
const DETERMINERS = new Set(['a', 'an', 'the', 'my', 'your', 'our', 'their', 'its', 'his', 'her', 'this', 'that', 'these', 'those', 'each']);

/** The first word after `from` that is not a stop word, or ''. */
function objectOf(ws: readonly string[], from: number): string {
  for (let i = from; i < ws.length && i < from + 3; i++) if (!STOP.has(ws[i]!)) return ws[i]!;
  return '';
}

/** Does `word` look like an English plural (`logs`, `recordings`; not `status`, `access`, `analysis`)? */
function plural(word: string): boolean {
  return /[a-z]{2}s$/.test(word) && !/(ss|us|is)$/.test(word);
}

/** Is `word` one of the verbs or question words that say an intent (`create`, `list`, `which`)? */
export function isIntentWord(word: string): boolean {
  return INTENT_INDEX.has(word);
}

/** Is `segment` a path parameter (`{id}`, `{owner}.json`)? */
const isParam = (segment: string): boolean => /^\{[^}]*\}/.test(segment);

/**
 * What an operation does, from its method and path shape: GET on a collection (a path ending in
 * a plural word) lists, on an item (ending in a parameter) or a singular reads; POST to a collection
 * creates, to an item updates; PUT and PATCH update; DELETE deletes. A POST to a named action
 * (`…/merge`, `…/cancel`) says none.
 */
export function operationIntent(method: string | undefined, path: string | undefined, name: string): Intent | undefined {
  if (method === undefined) return undefined;
  const m = method.toUpperCase();
  if (m === 'DELETE') return 'delete';
  if (m === 'PUT' || m === 'PATCH') return 'update';
  const segments = (path ?? '')
    .split('/')
    .filter((s) => s.length > 0)
    .map((s) => s.replace(/\.(json|xml)$/, ''));
  const last = segments[segments.length - 1] ?? '';
  const item = isParam(last);
  const plural = !item && /[a-z]s$/i.test(last) && !/ss$/i.test(last);
  if (m === 'GET' || m === 'HEAD') {
    const nameWords = words(name);
    if (nameWords.includes('list')) return 'list';
    return plural ? 'list' : 'read';
  }
  if (m === 'POST') return item ? 'update' : plural ? 'create' : undefined;
  return undefined;
}

/** Words by which a request speaks of its own user. */
const FIRST_PERSON = new Set(['i', 'me', 'my', 'mine', 'myself', 'own', 'am']);

/**
 * Terms a request in the first person ("which repositories do I own", "who am I") adds: an API
 * speaks of the caller as the authenticated or current user (`…-for-authenticated-user`).
 */
export const SELF_TERMS: readonly string[] = ['authenticated', 'current'].map((w) => stemmer(w));

/** Does the query speak of its own user? */
export function firstPerson(query: string): boolean {
  return words(query).some((w) => FIRST_PERSON.has(w));
}
