/**
 * Positions inside JSON text without building a syntax tree.
 *
 * OpenAPI descriptions can be 13 MB of JSON; a yaml `Document` of such a file takes seconds and
 * close to a gigabyte of heap, while `JSON.parse` takes tens of milliseconds. This module scans
 * the raw text instead: only the containers on the way to a requested pointer are scanned, and
 * each scanned container's members are cached, so later lookups under the same parents are cheap.
 * Every function assumes text that `JSON.parse` accepted.
 */

/** One member of a JSON object or array, by offsets into the text. */
type Member = {
  /** Property name, or the array index as a string. */
  key: string;
  /** Offset of the key's opening quote (of the value, for array items). */
  keyStart: number;
  /** Offset of the first character of the value. */
  valueStart: number;
};

type Container = { members: Member[]; byKey: Map<string, Member> };

const WS = new Set([0x20, 0x0a, 0x0d, 0x09]);
const BACKSLASH = 0x5c;

function skipWs(text: string, i: number): number {
  while (i < text.length && WS.has(text.charCodeAt(i))) i++;
  return i;
}

/** Offset just past the string whose opening quote is at `i`. */
function skipString(text: string, i: number): number {
  let from = i + 1;
  for (;;) {
    const q = text.indexOf('"', from);
    if (q < 0) return text.length;
    let slashes = 0;
    while (text.charCodeAt(q - 1 - slashes) === BACKSLASH) slashes++;
    if (slashes % 2 === 0) return q + 1;
    from = q + 1;
  }
}

/** Decodes the string token between `start` (opening quote) and `end` (just past the closing quote). */
function decodeString(text: string, start: number, end: number): string {
  const raw = text.slice(start + 1, end - 1);
  return raw.includes('\\') ? (JSON.parse(text.slice(start, end)) as string) : raw;
}

/** Offset just past the value starting at `i`. */
function skipValue(text: string, i: number): number {
  const c = text[i];
  if (c === '"') return skipString(text, i);
  if (c === '{' || c === '[') {
    const re = /["{}[\]]/g;
    re.lastIndex = i;
    let depth = 0;
    for (let m = re.exec(text); m !== null; m = re.exec(text)) {
      const ch = m[0];
      if (ch === '"') re.lastIndex = skipString(text, m.index);
      else if (ch === '{' || ch === '[') depth++;
      else if (--depth === 0) return m.index + 1;
    }
    return text.length;
  }
  const re = /[\s,\]}]/g;
  re.lastIndex = i;
  const m = re.exec(text);
  return m ? m.index : text.length;
}

/**
 * Offsets of every key that repeats a key earlier in the same object (the opening quote of the
 * repeated key). `JSON.parse` silently keeps the last one; mcpgen treats duplicates as errors.
 * `parsed`, when given, is `JSON.parse(text)`: a document whose objects hold as many keys as the
 * text spells has no duplicate, which is told without tracking keys per object.
 */
export function findDuplicateKeys(text: string, parsed?: unknown): number[] {
  if (parsed !== undefined && countKeys(text) === countParsedKeys(parsed)) return [];
  const found: number[] = [];
  const stack: Array<Set<string> | null> = [];
  let top: Set<string> | null = null;
  const re = /["{}[\]]/g;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    const i = m.index;
    const ch = m[0];
    if (ch === '"') {
      const end = skipString(text, i);
      if (top !== null && text.charCodeAt(skipWs(text, end)) === 0x3a) {
        const key = decodeString(text, i, end);
        if (top.has(key)) found.push(i);
        else top.add(key);
      }
      re.lastIndex = end;
    } else if (ch === '{') {
      stack.push(top);
      top = new Set();
    } else if (ch === '[') {
      stack.push(top);
      top = null;
    } else {
      top = stack.pop() ?? null;
    }
  }
  return found;
}

/** Where a pointer lookup ended. */
export type JsonHit = {
  /** Offset of the node found (of its key when asked for and it has one). */
  offset: number;
  /** How many pointer tokens were matched; fewer than given when the pointer does not exist. */
  matched: number;
};

/** Looks up JSON pointer tokens in JSON text, scanning lazily (see the module comment). */
export class JsonIndex {
  private readonly containers = new Map<number, Container | null>();

  constructor(private readonly text: string) {}

  /** Finds the node at `tokens`, or its nearest existing ancestor. */
  find(tokens: readonly string[], opts: { key?: boolean } = {}): JsonHit {
    let offset = skipWs(this.text, 0);
    let keyOffset = offset;
    let matched = 0;
    for (const token of tokens) {
      const c = this.container(offset);
      const member = c?.byKey.get(token);
      if (!c || !member) break;
      keyOffset = member.keyStart;
      offset = member.valueStart;
      matched++;
    }
    const useKey = opts.key === true && matched === tokens.length && matched > 0;
    return { offset: useKey ? keyOffset : offset, matched };
  }

  /** JSON pointer tokens of the member whose key (or array item) starts at `target`. */
  tokensAt(target: number): string[] {
    const tokens: string[] = [];
    let offset = skipWs(this.text, 0);
    for (;;) {
      const c = this.container(offset);
      if (!c) return tokens;
      let best: Member | undefined;
      for (const m of c.members) if (m.keyStart <= target) best = m;
      if (!best) return tokens;
      tokens.push(best.key);
      if (best.keyStart === target || best.valueStart === target) return tokens;
      offset = best.valueStart;
    }
  }

  /** The members of the object or array starting at `offset`, or null for a scalar. */
  private container(offset: number): Container | null {
    const cached = this.containers.get(offset);
    if (cached !== undefined) return cached;
    const c = this.scanContainer(offset);
    this.containers.set(offset, c);
    return c;
  }

  private scanContainer(start: number): Container | null {
    const { text } = this;
    const open = text[start];
    if (open !== '{' && open !== '[') return null;
    const isObject = open === '{';
    const members: Member[] = [];
    let i = skipWs(text, start + 1);
    while (i < text.length && text[i] !== '}' && text[i] !== ']') {
      let key = String(members.length);
      const keyStart = i;
      if (isObject) {
        const keyEnd = skipString(text, i);
        key = decodeString(text, i, keyEnd);
        i = skipWs(text, skipWs(text, keyEnd) + 1);
      }
      members.push({ key, keyStart, valueStart: i });
      i = skipWs(text, skipValue(text, i));
      if (text.charCodeAt(i) !== 0x2c) break;
      i = skipWs(text, i + 1);
    }
    const byKey = new Map<string, Member>();
    // JSON.parse keeps the last of duplicate keys; so does the index.
    for (const m of members) byKey.set(m.key, m);
    return { members, byKey };
  }
}

/** How many object keys JSON text spells (strings followed by `:`), jumping from quote to quote. */
export function countKeys(text: string): number {
  let n = 0;
  let i = text.indexOf('"');
  while (i >= 0) {
    const end = skipString(text, i);
    let j = end;
    let c = text.charCodeAt(j);
    while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = text.charCodeAt(++j);
    if (c === 0x3a) n++;
    i = text.indexOf('"', end);
  }
  return n;
}

/** How many keys the objects of a parsed JSON value hold. */
function countParsedKeys(value: unknown): number {
  let n = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (Array.isArray(v)) {
      for (const x of v) if (x !== null && typeof x === 'object') stack.push(x);
    } else if (v !== null && typeof v === 'object') {
      for (const k in v) {
        n++;
        const x = (v as Record<string, unknown>)[k];
        if (x !== null && typeof x === 'object') stack.push(x);
      }
    }
  }
  return n;
}
