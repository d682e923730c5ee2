/**
 * Results that fit, at build time: each operation tool's result settings (the manifest's
 * `results`, and its override's), its projection argument, and how many bytes of its compacted
 * JSON make one o200k token, calibrated on the spec's examples of its responses. The server
 * estimates a result's tokens from its bytes with that figure (counting them at run time would
 * cost more than the call), so the compaction here must be the runtime's (`runtime/operation/result-fit.ts`).
 */
import { compact } from '../../../templates/runtime/operation/result-fit.js';
import { type Diagnostics, type Location, pointer } from '../../core/diagnostics.js';
import { countAhead, countO200k, countO200kAll } from '../../core/token-memo.js';
import type { ResolvedResults, ResultPresetSettings } from '../../manifest/load.js';
import type { ResultsOverride } from '../../manifest/types.gen.js';
import type { IrResultPolicy, JsonSchema } from '../types.js';

/** The keys of a result policy, in the order they are emitted. */
const POLICY_KEYS = ['maxTokens', 'compact', 'omit', 'maxStringChars'] as const;

/** Compacted examples smaller than this (in total) say too little to calibrate on. */
const MIN_CALIBRATION_BYTES = 200;

/** Name the projection argument takes when the tool has no argument of that name. */
export const PROJECTION_ARG = 'fields';

/** Description of the projection argument (one sentence: it is repeated on every tool). */
export const PROJECTION_DESCRIPTION =
  'JMESPath expression selecting what to return from the response, e.g. `[].{id: id, name: name}` for a list; leave out for the whole result.';

/** The server-wide policy (`config.results`): the manifest's settings without `projection`. */
export function serverResultPolicy(settings: ResolvedResults): IrResultPolicy {
  return { maxTokens: settings.maxTokens, compact: settings.compact, omit: [...settings.omit], maxStringChars: settings.maxStringChars };
}

/**
 * `results.presets` checked against the declared concern presets: a name `concernPresets` does
 * not declare is a located `MCPGEN_UNKNOWN_PRESET` (at the key); a preset that sets nothing is
 * dropped. Each kept preset carries the keys written, in the order they are emitted.
 */
export function resolveResultPresets(
  written: Readonly<Record<string, ResultPresetSettings>> | undefined,
  presets: readonly string[],
  opts: { locate: (pointer: string, o?: { key?: boolean }) => Location; diagnostics: Diagnostics },
): Record<string, Partial<IrResultPolicy>> | undefined {
  const out: Record<string, Partial<IrResultPolicy>> = {};
  for (const [name, settings] of Object.entries(written ?? {})) {
    if (!presets.includes(name)) {
      opts.diagnostics.error(
        'MCPGEN_UNKNOWN_PRESET',
        `results.presets names preset ${JSON.stringify(name)}, which concernPresets does not declare`,
        presets.length > 0
          ? `use one of ${presets.map((d) => JSON.stringify(d)).join(', ')}`
          : 'declare it under `concernPresets`, or set the top-level `results` for the whole server',
        opts.locate(pointer(['results', 'presets', name]), { key: true }),
      );
      continue;
    }
    const kept: Partial<IrResultPolicy> = {};
    for (const key of POLICY_KEYS) {
      const v = settings[key];
      if (v !== undefined) Object.assign(kept, { [key]: Array.isArray(v) ? [...v] : v });
    }
    if (Object.keys(kept).length > 0) Object.defineProperty(out, name, { value: kept, enumerable: true, writable: true, configurable: true });
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** One tool's settings: the override's keys over the server's. */
export function toolResultSettings(global: ResolvedResults, override: ResultsOverride | undefined): ResolvedResults {
  if (override === undefined) return global;
  return {
    maxTokens: override.maxTokens ?? global.maxTokens,
    compact: override.compact ?? global.compact,
    omit: override.omit ? [...override.omit] : global.omit,
    maxStringChars: override.maxStringChars ?? global.maxStringChars,
    projection: override.projection ?? global.projection,
  };
}

/** The policy keys of `tool` whose values differ from `global`'s (the tool's `results`); `undefined` when none do. */
export function policyDifference(tool: ResolvedResults, global: ResolvedResults): Partial<IrResultPolicy> | undefined {
  const out: Partial<IrResultPolicy> = {};
  for (const key of POLICY_KEYS) {
    const a = tool[key];
    const b = global[key];
    const same = Array.isArray(a) && Array.isArray(b) ? a.length === b.length && a.every((x, i) => x === b[i]) : a === b;
    if (!same) Object.assign(out, { [key]: Array.isArray(a) ? [...a] : a });
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/**
 * The projection argument's name: `fields`, or `result_fields` when the tool already has a
 * `fields` argument, then `result_fields_2`, `result_fields_3`, … (`taken` holds every argument
 * name of the tool, hidden ones included).
 */
export function projectionArgName(taken: ReadonlySet<string>): string {
  if (!taken.has(PROJECTION_ARG)) return PROJECTION_ARG;
  const base = `result_${PROJECTION_ARG}`;
  if (!taken.has(base)) return base;
  let i = 2;
  while (taken.has(`${base}_${i}`)) i++;
  return `${base}_${i}`;
}

/** `schema` (an object-rooted input schema) with the optional projection argument `name` added last. */
export function withProjectionArgument(schema: JsonSchema, name: string): JsonSchema {
  const properties = typeof schema.properties === 'object' && schema.properties !== null ? (schema.properties as Record<string, unknown>) : {};
  return { ...schema, properties: { ...properties, [name]: { type: 'string', description: PROJECTION_DESCRIPTION } } };
}

/**
 * `value` compacted as the server compacts a JSON result — it is the server's own function
 * (templates/runtime/operation/result-fit.ts `compact`), so calibration measures what the server will send:
 * `null`s, empty arrays and objects and the keys `omit` matches dropped, strings over
 * `maxStringChars` shortened with a marker (an item of a list that compacts to nothing stays as
 * `null`). `undefined` when nothing is left.
 *
 * @example
 * compactJson({ id: 1, html_url: 'https://…', labels: [], body: null }, { omit: ['*_url'], maxStringChars: 1000 }); // { id: 1 }
 */
export function compactJson(value: unknown, opts: { omit: readonly string[]; maxStringChars: number }): unknown {
  return compact(value, opts);
}

/** One example as a result: its compacted JSON's bytes, and its tokens once counted. */
type Measured = { bytes: number; text: string | undefined; tokens?: number };

/** The o200k tokens of a tool's largest documented JSON response example, as documented and compacted (`build --report`). */
export type ExampleTokens = {
  /** How many JSON response examples the spec documents for the tool. */
  examples: number;
  /** Tokens of the largest example's JSON as documented (`JSON.stringify`, no indentation). */
  rawTokens: number;
  /** Tokens of the same example compacted as the server compacts it (equal to `rawTokens` with `compact: false`). */
  tokens: number;
};

/**
 * Calibrates `bytesPerToken` per tool. Examples are shared by many operations (GitHub's
 * `components/examples`), so each is compacted, and its tokens counted, once per policy.
 */
export class ResultCalibrator {
  readonly #measured = new Map<string, WeakMap<object, Measured>>();
  /** What was posted to be counted ahead. */
  readonly #ahead = new WeakSet<Measured>();

  /** `examples` as the server would send them under `settings` (`raw`: as documented), each measured once per policy. */
  #measure(examples: readonly unknown[], settings: Pick<ResolvedResults, 'compact' | 'omit' | 'maxStringChars'>): Measured[] {
    const key = settings.compact ? JSON.stringify([settings.omit, settings.maxStringChars]) : 'raw';
    let cache = this.#measured.get(key);
    if (!cache) this.#measured.set(key, (cache = new WeakMap()));
    return examples.map((e) => {
      const hit = typeof e === 'object' && e !== null ? cache.get(e) : undefined;
      if (hit) return hit;
      const text = JSON.stringify(settings.compact ? compactJson(e, settings) : e);
      const m: Measured = { bytes: text === undefined ? 0 : Buffer.byteLength(text, 'utf8'), text };
      if (typeof e === 'object' && e !== null) cache.set(e, m);
      return m;
    });
  }

  /**
   * A tool's bytes of compacted JSON per o200k token over `examples` (pooled: total bytes / total
   * tokens, to two decimals), in two halves, so many tools' texts are counted in one batch
   * ({@link countCalibrations}: one round trip to the tokenizer worker instead of one per example):
   * the examples measured now, `finish` the figure once they are counted (it counts what is left).
   * `undefined` when there is nothing to calibrate on (no examples, or fewer than 200 bytes).
   */
  calibration(examples: readonly unknown[], settings: Pick<ResolvedResults, 'compact' | 'omit' | 'maxStringChars'>): Calibration | undefined {
    if (examples.length === 0) return undefined;
    const measured = this.#measure(examples, settings);
    const bytes = measured.reduce((n, m) => n + m.bytes, 0);
    if (bytes < MIN_CALIBRATION_BYTES) return undefined;
    // the worker counts them while the model goes on (each text once)
    const fresh = measured.filter((m) => m.tokens === undefined && m.text !== undefined && !this.#ahead.has(m));
    for (const m of fresh) this.#ahead.add(m);
    countAhead(fresh.map((m) => m.text!));
    return {
      measured,
      finish: () => {
        let tokens = 0;
        for (const m of measured) tokens += tokensOf(m);
        return tokens === 0 ? undefined : Math.round((bytes / tokens) * 100) / 100;
      },
    };
  }

  /**
   * The tokens of the largest of `examples` (the one with the most tokens once compacted) as
   * documented and as the server compacts it, for `build --report`; `undefined` without examples.
   * Counts reuse what calibration counted; only the documented form costs a second count.
   */
  exampleTokens(examples: readonly unknown[], settings: Pick<ResolvedResults, 'compact' | 'omit' | 'maxStringChars'>): ExampleTokens | undefined {
    if (examples.length === 0) return undefined;
    const compacted = this.#measure(examples, settings).map(tokensOf);
    let largest = 0;
    for (let i = 1; i < compacted.length; i++) if (compacted[i]! > compacted[largest]!) largest = i;
    const rawTokens = settings.compact ? tokensOf(this.#measure([examples[largest]], { ...settings, compact: false })[0]!) : compacted[largest]!;
    return { examples: examples.length, rawTokens, tokens: compacted[largest]! };
  }
}

/** A tool's calibration, measured and not yet counted ({@link ResultCalibrator.calibration}). */
export type Calibration = { readonly measured: readonly Measured[]; finish: () => number | undefined };

/** Counts the texts of `calibrations` not counted yet, all in one batch (the same counts as one by one). */
export function countCalibrations(calibrations: readonly Calibration[]): void {
  const pending = new Set<Measured>();
  for (const c of calibrations) for (const m of c.measured) if (m.tokens === undefined && m.text !== undefined) pending.add(m);
  if (pending.size === 0) return;
  const list = [...pending];
  const counts = countO200kAll(list.map((m) => m.text!));
  list.forEach((m, i) => {
    m.tokens = counts[i]!;
    m.text = undefined;
  });
}

/** The tokens of a measured example, counted on first use (its text is then let go). */
function tokensOf(m: Measured): number {
  if (m.tokens === undefined) {
    m.tokens = m.text === undefined ? 0 : countO200k(m.text);
    m.text = undefined;
  }
  return m.tokens;
}
