/**
 * What a verified access token becomes, whichever way it was verified (a JWT checked against the
 * authorization server's keys, oauth-resource.ts; an opaque token introspected, oauth-introspect.ts):
 * the SDK's `AuthInfo`, whose `clientId` is the client identity every step uses (`sub`, else
 * `client_id`), with the scopes (`scope`, or `scp`) and the plain-valued claims access rules read.
 */

import type { AuthInfo } from '@modelcontextprotocol/server';
import { OAuthError, OAuthErrorCode } from '@modelcontextprotocol/server';

/** Clock skew allowed on `exp` and `nbf`, in seconds. */
export const CLOCK_SKEW_S = 30;

/** The authorization server could not be reached or answered nonsense: the request cannot be checked now (503). */
export class AuthorizationServerUnavailable extends Error {
  /** Creates the error; `message` names URLs and statuses only. */
  constructor(message: string) {
    super(message);
    this.name = 'AuthorizationServerUnavailable';
  }
}

/** A value usable as a client identity: printable, no spaces, at most 255 characters. */
const IDENTITY = /^[^\s\u0000-\u001f\u007f-\u009f]{1,255}$/u;

/** The scopes of a token: `scope` (space-separated, RFC 9068) or `scp` (a list, as Entra and Okta write it). */
function scopesOf(payload: Claims): string[] {
  if (typeof payload.scope === 'string') return payload.scope.split(' ').filter((s) => s !== '');
  if (Array.isArray(payload.scp)) return payload.scp.filter((s): s is string => typeof s === 'string');
  if (typeof payload.scp === 'string') return payload.scp.split(' ').filter((s) => s !== '');
  return [];
}

/** The claims of `payload` whose values are strings, numbers, booleans or lists of them. */
function plainClaims(payload: Claims): Record<string, unknown> {
  const plain = (v: unknown): boolean => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
  return Object.fromEntries(Object.entries(payload).filter(([, v]) => plain(v) || (Array.isArray(v) && v.every(plain))));
}

/** `text` as a URL, or `undefined` when it is none (an audience such as `mcp-server` is compared by jose only). */
export function asUrl(text: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}

/** A token's claims (a JWT's payload, or an introspection response). */
export type Claims = Record<string, unknown>;

/**
 * The `AuthInfo` of a token whose claims were verified for `audience` (and `issuer`); refuses
 * (OAuthError invalid_token) one without a usable `sub` or `client_id`, or without `exp`.
 */
export function tokenAuthInfo(token: string, claims: Claims, issuer: string, audience: string): AuthInfo {
  const sub = typeof claims.sub === 'string' ? claims.sub : undefined;
  const clientId = typeof claims.client_id === 'string' ? claims.client_id : typeof claims.azp === 'string' ? claims.azp : undefined;
  const identity = sub ?? clientId;
  if (identity === undefined || !IDENTITY.test(identity))
    throw new OAuthError(OAuthErrorCode.InvalidToken, 'The access token names no usable subject (sub) or client (client_id)');
  if (typeof claims.exp !== 'number') throw new OAuthError(OAuthErrorCode.InvalidToken, "The access token's exp claim is not acceptable");
  return {
    token,
    clientId: identity,
    scopes: scopesOf(claims),
    // the SDK refuses a token past `expiresAt`: the skew allowance counts there too
    expiresAt: claims.exp + CLOCK_SKEW_S,
    ...(asUrl(audience) ? { resource: asUrl(audience)! } : {}),
    // the token's claims for access rules (policy.access rules[].claims): plain values and lists of them
    extra: { sub: sub ?? null, client_id: clientId ?? null, iss: issuer, claims: plainClaims(claims) },
  };
}
