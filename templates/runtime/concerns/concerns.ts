/**
 * Concern filtering, the pure part: declarations, per-primitive mappings,
 * the matching rule, validation of client preferences and one session's preference state.
 * The protocol side (methods, notifications, `_meta`) is in `concern-protocol.ts`.
 *
 * Defaults: a declaration's `default` is published (in the capability and `concerns/list`) so
 * hosts can offer it, but it is NOT applied to filtering: a concern the host did not set is
 * ignored, and clients knowing nothing of concerns see everything; applying defaults would hide
 * primitives from exactly those clients. A host that wants the defaults
 * sends them. Values are matched exactly (case-sensitive).
 *
 * This file is copied verbatim into every generated project.
 */
import { isRecord } from '../core/json-shapes.js';
import type { PrimitiveKind } from '../core/primitive-gate.js';

/** A concern the server declares (manifest `concerns`). */
export type ConcernDeclaration = {
  readonly name: string;
  readonly description?: string;
  /** The values a host may choose from. */
  readonly values: readonly string[];
  /** Suggested value; published only, never applied implicitly (see the module comment). */
  readonly default?: string;
};

/**
 * Which values of each concern a primitive matches: concern name ⇒ one value or several. A
 * concern the mapping does not name matches every value.
 */
export type ConcernMapping = { readonly [concern: string]: string | readonly string[] };

/** Concern mappings per primitive kind: id (tool/prompt name, resource URI, URI template) ⇒ mapping. */
export type ConcernMappings = { readonly [K in PrimitiveKind]?: { readonly [id: string]: ConcernMapping } };

/** A host's preferences: concern name ⇒ chosen value. Concerns absent here are unset. */
export type ConcernPreferences = Record<string, string>;

/** A change to preferences: concern name ⇒ new value, or `null` to unset the concern. */
export type ConcernPatch = Record<string, string | null>;

/** Named preference sets (manifest `concernPresets`). */
export type ConcernPresets = { readonly [preset: string]: ConcernPreferences };

/** Outcome of `validatePreferences`: the valid entries, and one message per invalid entry. */
export type PreferencesCheck = {
  /** The entries that are valid (all of them when `problems` is empty). */
  readonly preferences: ConcernPatch;
  /** Human-readable problems; empty means the whole input is valid. */
  readonly problems: readonly string[];
};

/**
 * The matching rule: a primitive matches when, for every concern the host configured, the
 * primitive either does not map that concern or lists the configured value. Concerns the host
 * did not configure are ignored; an absent mapping matches everything.
 */
export function matches(mapping: ConcernMapping | undefined, prefs: ConcernPreferences): boolean {
  if (mapping === undefined) return true;
  for (const [concern, value] of Object.entries(prefs)) {
    if (!Object.hasOwn(mapping, concern)) continue;
    const mapped = mapping[concern];
    if (mapped === undefined) continue;
    if (typeof mapped === 'string' ? mapped !== value : !mapped.includes(value)) return false;
  }
  return true;
}

/** `"a", "b"` rendering of a list of names. */
function quoted(names: readonly string[]): string {
  return names.map((n) => JSON.stringify(n)).join(', ');
}

/**
 * Checks preferences sent by a client against the declarations. Every entry must name a
 * declared concern and carry one of its values (or `null`, which unsets the concern). Problems
 * name the allowed values or the declared concerns. `input` that is not an object is one problem.
 */
export function validatePreferences(declarations: readonly ConcernDeclaration[], input: unknown): PreferencesCheck {
  if (!isRecord(input)) {
    return { preferences: {}, problems: ['concern preferences must be an object mapping concern names to values'] };
  }
  const byName = new Map(declarations.map((d) => [d.name, d]));
  const preferences: ConcernPatch = {};
  const problems: string[] = [];
  for (const [name, value] of Object.entries(input)) {
    const decl = byName.get(name);
    if (decl === undefined) {
      const declared = declarations.length > 0 ? `declared concerns: ${quoted(declarations.map((d) => d.name))}` : 'this server declares no concerns';
      problems.push(`unknown concern ${JSON.stringify(name)} (${declared})`);
    } else if (value === null) {
      preferences[name] = null;
    } else if (typeof value !== 'string') {
      problems.push(`concern ${JSON.stringify(name)}: value must be a string, one of ${quoted(decl.values)}`);
    } else if (!decl.values.includes(value)) {
      problems.push(`concern ${JSON.stringify(name)}: unknown value ${JSON.stringify(value)} (allowed values: ${quoted(decl.values)})`);
    } else {
      preferences[name] = value;
    }
  }
  return { preferences, problems };
}

/** Preferences with the entries of `patch` applied (`null` unsets). Pure. */
export function applyPatch(base: ConcernPreferences, patch: ConcernPatch): ConcernPreferences {
  const out: ConcernPreferences = { ...base };
  for (const [name, value] of Object.entries(patch)) {
    if (value === null) delete out[name];
    else out[name] = value;
  }
  return out;
}

/** Whether two preference objects hold the same entries. */
export function samePreferences(a: ConcernPreferences, b: ConcernPreferences): boolean {
  const ak = Object.keys(a);
  if (ak.length !== Object.keys(b).length) return false;
  return ak.every((k) => Object.hasOwn(b, k) && a[k] === b[k]);
}

/**
 * The preferences of ONE session (one connection / one `Server` instance). Holds validated
 * values only: validate with `validatePreferences` first.
 */
export class ConcernSession {
  private prefs: ConcernPreferences = {};

  /** A copy of the session's preferences (unset concerns absent). */
  preferences(): ConcernPreferences {
    return { ...this.prefs };
  }

  /** Replaces all preferences (`null` entries are left unset). Returns whether anything changed. */
  setAll(prefs: ConcernPatch): boolean {
    return this.replace(applyPatch({}, prefs));
  }

  /**
   * Applies a partial update: named concerns take the new value (`null` unsets), the others keep
   * theirs. Idempotent. Returns whether anything changed.
   */
  update(patch: ConcernPatch): boolean {
    return this.replace(applyPatch(this.prefs, patch));
  }

  /**
   * The preferences that apply to one request: the session's, overlaid by `metaOverride` (a
   * request's `_meta` preferences) for that request only; the session is not changed.
   */
  effective(metaOverride?: ConcernPatch): ConcernPreferences {
    return metaOverride === undefined ? { ...this.prefs } : applyPatch(this.prefs, metaOverride);
  }

  private replace(next: ConcernPreferences): boolean {
    if (samePreferences(this.prefs, next)) return false;
    this.prefs = next;
    return true;
  }
}
