/**
 * Reflection gate keys: pure functions, no I/O.
 *
 * The key of one gate is the sha256 (64 lower-case hex digits) of the canonical JSON of
 *   { args: normalizeArgs(promptArgs), domain, template: templateHash(templateText), tool? }
 * where `tool` is present only for `scope: tool` gates. So the same justification is found again
 * whatever the key order or incidental whitespace of the arguments, and a changed prompt template
 * gives a new key (stale justifications are never hit).
 *
 * Normalisation rule (`normalizeArgs`), applied recursively:
 *  - object keys are sorted (by UTF-16 code unit, as `Array.prototype.sort`); a key whose value is
 *    `undefined`, a function or a symbol is dropped;
 *  - strings are Unicode NFC-normalised, trimmed, and every internal run of whitespace (spaces,
 *    tabs, line breaks, any `\s`) becomes one space;
 *  - numbers, booleans and `null` stay as they are (a non-finite number becomes `null`, `-0` is
 *    `0`, as JSON has it); bigints become their decimal string;
 *  - arrays keep their order; an `undefined` element becomes `null` (as JSON has it);
 *  - anything with a `toJSON` (e.g. a `Date`) is replaced by what it returns first.
 * Object keys themselves are not altered.
 *
 * This file is copied verbatim into every generated project.
 */
import { createHash } from 'node:crypto';
import type { JsonValue } from '../core/canonical-json.js';
import { canonicalJson, jsonSafe } from '../core/canonical-json.js';

/** What identifies one gate's justification; see the module comment. */
export type GateKeyInput = {
  /** Reflection domain of the gate. */
  readonly domain: string;
  /** The gate's prompt template text, exactly as configured. */
  readonly templateText: string;
  /** The prompt arguments the template is rendered with (already rendered from the tool's arguments). */
  readonly promptArgs: unknown;
  /** The tool name; set only for `scope: tool` gates, so the key is not shared across tools. */
  readonly tool?: string;
};

/** A prompt argument's string as hashed: NFC, trimmed, runs of white space as one space. */
const normalizeText = (s: string): string => s.normalize('NFC').trim().replace(/\s+/g, ' ');

/**
 * Normalises prompt arguments for hashing (rule in the module comment). Returns `null` for a
 * top-level value that JSON cannot represent (`undefined`, a function). Throws on cycles.
 */
export function normalizeArgs(value: unknown): JsonValue {
  return jsonSafe(value, normalizeText, 'normalizeArgs');
}

/** sha256 (lower-case hex) of `text` as UTF-8, exactly as given (no normalisation). */
export function templateHash(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** The 64-hex key of one gate (see the module comment). */
export function gateKey(input: GateKeyInput): string {
  const material: { [key: string]: JsonValue } = {
    args: normalizeArgs(input.promptArgs),
    domain: input.domain,
    template: templateHash(input.templateText),
  };
  if (input.tool !== undefined) material.tool = input.tool;
  return createHash('sha256').update(canonicalJson(material), 'utf8').digest('hex');
}

/** Whether `value` has the shape of a gate key (64 lower-case hex digits). */
export function isGateKey(value: unknown): value is string {
  return typeof value === 'string' && /^[0-9a-f]{64}$/.test(value);
}
