/**
 * Arguments the model never sees, and defaults. The manifest can hide an argument (the server
 * sends a constant, or the value of an environment variable) and give others a default (sent
 * when the model leaves the argument out). Both are filled into the validated arguments just
 * before the request is built, under the argument names the request mapping uses.
 *
 * Variables are read once, at start-up, and their values are treated like credentials: a call
 * returns them as secrets so that error texts and logs never show them, and a tool whose variable
 * is unset is refused with a message naming the variable, without calling the API.
 */
import { isPlainObject } from '../core/json-shapes.js';
import type { HttpBody, HttpOperation, HttpParam, OperationTool } from '../core/types.js';
import { read } from '../process/settings.js';
import { argumentVariables } from '../process/variables.js';
import { encodeRfc3986 } from './request.js';

/** Values of the variables hidden arguments are read from, by variable name (set ones only). */
export type ArgumentEnv = ReadonlyMap<string, string>;

/** Arguments ready for the request, with the secret values they carry; or why there are none. */
export type FilledArguments =
  | { readonly ok: true; readonly args: Record<string, unknown>; readonly secrets: readonly string[] }
  /** `invalid`: the model sent what it may not (a hidden body field); else configuration is missing. */
  | { readonly ok: false; readonly message: string; readonly invalid?: true };

/** A variable and the tools that cannot run while it is unset. */
export type MissingArgumentVariable = { readonly variable: string; readonly tools: readonly string[] };

function fillable(op: HttpOperation): Array<HttpParam | HttpBody> {
  return op.body ? [...op.params, op.body] : [...op.params];
}

/** Reads the variables the hidden arguments of `tools` come from; unset and blank ones are left out. */
export function readArgumentEnv(tools: readonly OperationTool[], env: NodeJS.ProcessEnv): ArgumentEnv {
  const out = new Map<string, string>();
  for (const name of argumentVariables(tools).keys()) {
    const v = read(env, name);
    if (v !== undefined) out.set(name, v);
  }
  return out;
}

/** Every variable of a hidden argument that is not set, with the tools that need it (for the start-up warning). */
export function missingArgumentVariables(tools: readonly OperationTool[], env: NodeJS.ProcessEnv): MissingArgumentVariable[] {
  return [...argumentVariables(tools)].filter(([name]) => read(env, name) === undefined).map(([variable, names]) => ({ variable, tools: names }));
}

/** The forms a value may take in a request or an error text: as is, percent-encoded, form-encoded, inside a JSON string. */
function secretForms(value: string): string[] {
  const forms = [
    value,
    encodeRfc3986(value),
    encodeURIComponent(value),
    new URLSearchParams({ v: value }).toString().slice(2),
    JSON.stringify(value).slice(1, -1),
  ];
  return [...new Set(forms)];
}

/** Sets an own property, even one named `__proto__`. */
function define(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/**
 * `args` (already validated) with the hidden arguments of `op` filled in, and the defaults of
 * arguments the model left out. Returns new arguments; `args` is not modified. Refuses, naming
 * the variables, when a hidden argument's variable is not in `env`.
 */
export function fillArguments(op: HttpOperation, args: Record<string, unknown>, env: ArgumentEnv): FilledArguments {
  const out: Record<string, unknown> = { ...args };
  const secrets: string[] = [];
  const missing: string[] = [];
  for (const a of fillable(op)) {
    if (a.fixed !== undefined) {
      if ('env' in a.fixed) {
        const value = env.get(a.fixed.env);
        if (value === undefined) missing.push(`${a.fixed.env} (hidden argument ${JSON.stringify(a.arg)})`);
        else {
          secrets.push(...secretForms(value));
          define(out, a.arg, value);
        }
      } else define(out, a.arg, a.fixed.value);
    } else if (Object.hasOwn(a, 'default') && (!Object.hasOwn(out, a.arg) || out[a.arg] === undefined)) {
      define(out, a.arg, a.default);
    }
  }
  const fields = op.body?.fields ?? [];
  if (op.body && fields.length > 0) {
    const given = out[op.body.arg];
    const body: Record<string, unknown> = isPlainObject(given) ? { ...given } : {};
    // a hidden field is not the model's to send: refused like an unknown argument, never forwarded
    const sent = fields.filter((f) => isPlainObject(given) && Object.hasOwn(given, f.name)).map((f) => JSON.stringify(f.name));
    if (sent.length > 0) return { ok: false, invalid: true, message: `unknown argument ${sent.join(', ')} in ${JSON.stringify(op.body.arg)}` };
    if (given === undefined || isPlainObject(given)) {
      for (const f of fields) {
        if ('env' in f.fixed) {
          const value = env.get(f.fixed.env);
          if (value === undefined) missing.push(`${f.fixed.env} (hidden argument ${JSON.stringify(f.name)} of ${JSON.stringify(op.body.arg)})`);
          else {
            secrets.push(...secretForms(value));
            define(body, f.name, value);
          }
        } else define(body, f.name, f.fixed.value);
      }
      define(out, op.body.arg, body);
    }
  }
  if (missing.length > 0) return { ok: false, message: `missing configuration: set ${missing.join(' and ')} in the server's environment` };
  return { ok: true, args: out, secrets };
}
