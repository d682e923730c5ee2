/**
 * State shared by every server instance that has the same key (node:crypto only): the sealed
 * `requestState` of multi-round tool calls (input rounds: encrypted, since it may hold API results
 * fetched with the server's credentials) and the signed `hash` of reflection gate hints (not
 * secret: the model copies it). Modern (2026-07-28) clients have no session and may reach another instance on each
 * request, so nothing here relies on process memory.
 *
 * Formats (every part base64url or decimal, separated by dots):
 *  - sealed state: `<base64url(iv)>.<base64url(ciphertext)>.<expiry, unix ms>.<base64url(tag)>`:
 *    the JSON value encrypted with AES-256-GCM (12-byte random iv, 16-byte tag) under a key derived
 *    from the state key by HKDF-SHA256 (info "mcpgen.state.v2"), the expiry authenticated as
 *    additional data ("mcpgen.state.v2\0" + expiry). GCM's tag is the only authentication (no
 *    separate HMAC): a state altered, or sealed under another key, fails it. Nothing of the value
 *    can be read without the key;
 *  - gate hint: `<64 hex>.<expiry, unix seconds>.<mac>`, mac = two 16-byte HMAC halves: the first
 *    binds the hex and the expiry ("mcpgen.hint.v1\0hex.expiry"), the second also the domain
 *    ("…\0domain"). A wrong first half means another key (or a forgery); a right first half and a
 *    wrong second half means the hint was issued for another domain. Both are compared in constant
 *    time.
 *
 * This file is copied verbatim into every generated project.
 */
import { createCipheriv, createDecipheriv, createHash, createHmac, hkdfSync, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';

/** Shortest accepted `<PREFIX>_STATE_KEY`, in characters. */
export const MIN_STATE_KEY_LENGTH = 32;
/** Default lifetime of sealed state (`sealState`): one hour. */
export const DEFAULT_STATE_TTL_MS = 60 * 60 * 1000;
/** Default lifetime of a gate hint (`signHint`): 24 hours. */
export const DEFAULT_HINT_TTL_MS = 24 * 60 * 60 * 1000;

/** Name of the environment variable holding the state key. */
export function stateKeyVariable(envPrefix: string): string {
  return `${envPrefix}_STATE_KEY`;
}

/**
 * The state key: sha256 of `<envPrefix>_STATE_KEY` (any string of at least 32 characters), or,
 * when that variable is absent or blank, 32 random bytes with `generated: true` (the caller should
 * warn that hints and input rounds then neither survive a restart nor are accepted by other
 * instances). Throws when the variable is set but too short.
 */
export function stateKey(envPrefix: string, env: NodeJS.ProcessEnv = process.env): { key: Buffer; generated: boolean } {
  const name = stateKeyVariable(envPrefix);
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return { key: randomBytes(32), generated: true };
  if (raw.length < MIN_STATE_KEY_LENGTH) {
    throw new Error(
      `${name} must be at least ${MIN_STATE_KEY_LENGTH} characters long (got ${raw.length}); use a random secret, e.g. the output of \`openssl rand -hex 32\``,
    );
  }
  return { key: createHash('sha256').update(raw, 'utf8').digest(), generated: false };
}

/** Why `openState` refused a token. */
export type StateRefusal = 'malformed' | 'expired' | 'bad-signature';

/** A token `openState` refused; `reason` says why. */
export class StateError extends Error {
  readonly reason: StateRefusal;
  constructor(reason: StateRefusal, message: string) {
    super(message);
    this.name = 'StateError';
    this.reason = reason;
  }
}

function mac(key: Buffer, text: string, bytes = 32): Buffer {
  return createHmac('sha256', key).update(text, 'utf8').digest().subarray(0, bytes);
}

function sameBytes(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

const B64URL = /^[A-Za-z0-9_-]*$/;
const DECIMAL = /^(0|[1-9][0-9]{0,15})$/;

/** The AES-256-GCM key of sealed state, derived from the state key with its own label (cached per key). */
const sealKeys = new WeakMap<Buffer, Buffer>();
function sealKey(key: Buffer): Buffer {
  let k = sealKeys.get(key);
  if (k === undefined) {
    k = Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), 'mcpgen.state.v2', 32));
    sealKeys.set(key, k);
  }
  return k;
}

/**
 * Seals `value` (anything `JSON.stringify` accepts) into an encrypted token valid for `ttlMs`
 * (default one hour) from `now`.
 */
export function sealState(key: Buffer, value: unknown, ttlMs: number = DEFAULT_STATE_TTL_MS, now: number = Date.now()): string {
  const json = JSON.stringify(value);
  if (json === undefined) throw new TypeError('sealState: the value is not JSON-serialisable');
  const expiry = String(Math.ceil(now + ttlMs));
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', sealKey(key), iv);
  cipher.setAAD(Buffer.from(`mcpgen.state.v2\0${expiry}`, 'utf8'));
  const body = Buffer.concat([cipher.update(json, 'utf8'), cipher.final()]);
  return `${iv.toString('base64url')}.${body.toString('base64url')}.${expiry}.${cipher.getAuthTag().toString('base64url')}`;
}

/** The value sealed in `token`; throws `StateError` when it is malformed, sealed under another key or altered, or expired. */
export function openState(key: Buffer, token: string, now: number = Date.now()): unknown {
  const parts = typeof token === 'string' ? token.split('.') : [];
  const [iv, body, expiry, tag] = parts;
  if (
    parts.length !== 4 ||
    iv === undefined ||
    body === undefined ||
    expiry === undefined ||
    tag === undefined ||
    !B64URL.test(iv) ||
    !B64URL.test(body) ||
    !DECIMAL.test(expiry) ||
    !B64URL.test(tag)
  ) {
    throw new StateError('malformed', 'Invalid request state: not a token this server issued (malformed)');
  }
  const ivBytes = Buffer.from(iv, 'base64url');
  const tagBytes = Buffer.from(tag, 'base64url');
  if (ivBytes.length !== 12 || tagBytes.length !== 16) throw new StateError('malformed', 'Invalid request state: not a token this server issued (malformed)');
  let json: string;
  try {
    const decipher = createDecipheriv('aes-256-gcm', sealKey(key), ivBytes, { authTagLength: 16 });
    decipher.setAAD(Buffer.from(`mcpgen.state.v2\0${expiry}`, 'utf8'));
    decipher.setAuthTag(tagBytes);
    json = Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    throw new StateError('bad-signature', 'Invalid request state: its signature does not match (issued under another state key, or altered)');
  }
  if (now >= Number(expiry)) throw new StateError('expired', `Request state expired at ${new Date(Number(expiry)).toISOString()}; start the call again`);
  try {
    return JSON.parse(json) as unknown;
  } catch {
    throw new StateError('malformed', 'Invalid request state: its payload is not JSON');
  }
}

/** Why `verifyHint` refused a hint. */
export type HintRefusal = 'malformed' | 'expired' | 'bad-signature' | 'domain-mismatch';

/** Outcome of `verifyHint`: the 64-hex key, or why not (`expiresAt`, unix ms, for `expired`). */
export type HintVerdict = { readonly ok: true; readonly hex: string } | { readonly ok: false; readonly reason: HintRefusal; readonly expiresAt?: number };

const HEX64 = /^[0-9a-f]{64}$/;

function hintMacs(key: Buffer, hex: string, expiry: string, domain: string): [Buffer, Buffer] {
  const base = `mcpgen.hint.v1\0${hex}.${expiry}`;
  return [mac(key, base, 16), mac(key, `${base}\0${domain}`, 16)];
}

/** A signed hint `<64hex>.<expiry unix seconds>.<mac>` for gate key `hex` in `domain`, valid `ttlMs` from `now`. */
export function signHint(key: Buffer, hex64: string, domain: string, ttlMs: number = DEFAULT_HINT_TTL_MS, now: number = Date.now()): string {
  if (!HEX64.test(hex64)) throw new TypeError('signHint: the key must be 64 lower-case hex digits');
  const expiry = String(Math.ceil((now + ttlMs) / 1000));
  const [a, b] = hintMacs(key, hex64, expiry, domain);
  return `${hex64}.${expiry}.${Buffer.concat([a, b]).toString('base64url')}`;
}

/** Checks a hint from `signHint` for `domain` (module comment); never throws. */
export function verifyHint(key: Buffer, token: unknown, domain: string, now: number = Date.now()): HintVerdict {
  const parts = typeof token === 'string' ? token.split('.') : [];
  const [hex, expiry, sig] = parts;
  if (parts.length !== 3 || hex === undefined || expiry === undefined || sig === undefined || !HEX64.test(hex) || !DECIMAL.test(expiry) || !B64URL.test(sig))
    return { ok: false, reason: 'malformed' };
  const got = Buffer.from(sig, 'base64url');
  if (got.length !== 32) return { ok: false, reason: 'malformed' };
  const [a, b] = hintMacs(key, hex, expiry, domain);
  if (!sameBytes(got.subarray(0, 16), a)) return { ok: false, reason: 'bad-signature' };
  if (!sameBytes(got.subarray(16), b)) return { ok: false, reason: 'domain-mismatch' };
  const expiresAt = Number(expiry) * 1000;
  if (now >= expiresAt) return { ok: false, reason: 'expired', expiresAt };
  return { ok: true, hex };
}

/** What a multi-round tool call keeps across its input rounds: its id and the JSON state its steps mutate. */
export type RoundState = { callId: string; state: Record<string, unknown> };

/**
 * Runs one round of a tool call with its round state: `requestState` (what
 * `ctx.mcpReq.requestState()` returned) is opened when it is a non-empty string, else a fresh
 * `{callId, state: {}}` is made; when `run` returns an input-required result
 * (`resultType: "input_required"`), the (possibly mutated) round state is sealed into its
 * `requestState` (valid `ttlMs`, default one hour). Throws `StateError` for a bad `requestState`
 * (the caller answers with an error).
 */
export async function withRoundState<R extends object>(
  key: Buffer,
  requestState: unknown,
  run: (round: RoundState) => Promise<R> | R,
  options: { ttlMs?: number; now?: number } = {},
): Promise<R & { requestState?: string }> {
  let round: RoundState;
  if (typeof requestState === 'string' && requestState !== '') {
    const opened = openState(key, requestState, options.now);
    const r = opened as Partial<RoundState> | null;
    if (typeof r !== 'object' || r === null || typeof r.callId !== 'string' || typeof r.state !== 'object' || r.state === null || Array.isArray(r.state)) {
      throw new StateError('malformed', 'Invalid request state: not the state of a tool call');
    }
    round = { callId: r.callId, state: r.state };
  } else round = { callId: randomUUID(), state: {} };
  const result = await run(round);
  if ((result as { resultType?: unknown }).resultType === 'input_required') {
    return { ...result, requestState: sealState(key, round, options.ttlMs ?? DEFAULT_STATE_TTL_MS, options.now) };
  }
  return result;
}
