/**
 * A string matching a regular expression of a JSON Schema `pattern`, for the simple patterns
 * real specs use for identifiers (`^AC[0-9a-fA-F]{32}$`, `^[a-z][a-z0-9-]{0,30}[a-z0-9]$`, …):
 * literals, escapes, classes, groups, alternation (the first branch) and quantifiers (their
 * minimum, but one for `*` when that still matches). The result is checked against the
 * pattern; `undefined` when no match was made.
 */

const CLASS_ESCAPES: Record<string, string> = { d: '0', w: 'a', s: ' ', D: 'a', W: '-', S: 'a' };
const CANDIDATES = ['a', '0', 'A', 'x', '_', '-', '.', ' '];

class Gen {
  i = 0;
  /** `star`: how many times `*` repeats (1 gives non-empty values where the pattern allows them) */
  constructor(
    private readonly src: string,
    private readonly star: number,
  ) {}

  /** alternatives: the first one */
  alternation(): string {
    const first = this.sequence();
    while (this.src[this.i] === '|') {
      this.i++;
      this.sequence();
    }
    return first;
  }

  private sequence(): string {
    let out = '';
    while (this.i < this.src.length && this.src[this.i] !== '|' && this.src[this.i] !== ')') {
      const atom = this.atom();
      out += atom.repeat(this.quantifier());
    }
    return out;
  }

  private atom(): string {
    const c = this.src[this.i++]!;
    if (c === '^' || c === '$') return '';
    if (c === '.') return 'a';
    if (c === '(') {
      if (this.src[this.i] === '?') {
        if (this.src[this.i + 1] !== ':') throw new Error('lookaround');
        this.i += 2;
      }
      const inner = this.alternation();
      if (this.src[this.i++] !== ')') throw new Error('unbalanced');
      return inner;
    }
    if (c === '[') return this.cls();
    if (c === '\\') {
      const e = this.src[this.i++]!;
      if (e === 'b' || e === 'B') return '';
      return CLASS_ESCAPES[e] ?? e;
    }
    return c;
  }

  /** a character class: the first character it allows */
  private cls(): string {
    const negated = this.src[this.i] === '^';
    if (negated) this.i++;
    const ranges: Array<[string, string]> = [];
    let first = true;
    while (this.i < this.src.length && (this.src[this.i] !== ']' || first)) {
      first = false;
      let c = this.src[this.i++]!;
      if (c === '\\') {
        const e = this.src[this.i++]!;
        c = CLASS_ESCAPES[e] ?? e;
      }
      if (this.src[this.i] === '-' && this.src[this.i + 1] !== ']' && this.src[this.i + 1] !== undefined) {
        this.i++;
        let hi = this.src[this.i++]!;
        if (hi === '\\') hi = this.src[this.i++]!;
        ranges.push([c, hi]);
      } else ranges.push([c, c]);
    }
    this.i++; // ]
    const inClass = (ch: string) => ranges.some(([lo, hi]) => ch >= lo && ch <= hi);
    if (!negated) return ranges[0]![0];
    const pick = CANDIDATES.find((ch) => !inClass(ch));
    if (pick === undefined) throw new Error('empty class');
    return pick;
  }

  /** the minimum count of the quantifier after an atom (1 when there is none) */
  private quantifier(): number {
    const c = this.src[this.i];
    let n = 1;
    if (c === '*' || c === '?') {
      this.i++;
      n = c === '*' ? this.star : 0;
    } else if (c === '+') this.i++;
    else if (c === '{') {
      const m = /^\{(\d+)(,\d*)?\}/.exec(this.src.slice(this.i));
      if (!m) return 1;
      this.i += m[0].length;
      n = Number(m[1]);
    } else return 1;
    if (this.src[this.i] === '?') this.i++; // lazy
    return n;
  }
}

/** A string that `pattern` matches, or `undefined`. */
export function samplePattern(pattern: string): string | undefined {
  let re: RegExp;
  try {
    re = new RegExp(pattern, 'u');
  } catch {
    return undefined;
  }
  for (const star of [1, 0]) {
    try {
      const g = new Gen(pattern, star);
      const s = g.alternation();
      if (g.i >= pattern.length && re.test(s)) return s;
    } catch {
      // unsupported syntax: no sample
    }
  }
  return undefined;
}
