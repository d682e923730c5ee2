/**
 * The SDK clients' own OAuth support, driven headlessly: the v1 SDK client (legacy era) and the v2
 * client pinned to 2026-07-28 (modern era) with an in-memory `OAuthClientProvider`. Connecting
 * meets the server's 401, the SDK discovers the authorization server from the Protected Resource
 * Metadata, registers itself (dynamic client registration) and asks to redirect the user; the
 * test logs in through the provider's pages ({@link headlessAuthorize}), hands the callback to
 * `finishAuth` (the v2 client wants all of its parameters: the provider sends RFC 9207 `iss`),
 * and connects again with the tokens.
 */

import { Client as ModernClient, StreamableHTTPClientTransport as ModernHttp } from '@modelcontextprotocol/client';
import { UnauthorizedError as LegacyUnauthorized } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyHttp } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { headlessAuthorize } from './idp.js';
import type { AnyClient, Era } from './linked.js';

const REDIRECT = 'http://127.0.0.1:1/callback';

/** Everything an OAuth client keeps between the redirect and the callback, in memory. */
class MemoryProvider {
  authorizationUrl: URL | undefined;
  #client: unknown;
  #tokens: unknown;
  #verifier = '';
  constructor(readonly name: string) {}
  get redirectUrl(): string {
    return REDIRECT;
  }
  get clientMetadata() {
    return {
      client_name: this.name,
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.#client as never;
  }
  saveClientInformation(info: unknown) {
    this.#client = info;
  }
  tokens() {
    return this.#tokens as never;
  }
  saveTokens(tokens: unknown) {
    this.#tokens = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.#verifier = verifier;
  }
  codeVerifier() {
    return this.#verifier;
  }
  #discovery: unknown;
  saveDiscoveryState(state: unknown) {
    this.#discovery = state;
  }
  discoveryState() {
    return this.#discovery as never;
  }
}

/** A client of `era` connected to `url` after authorizing as the user `login`. */
export async function oauthClient(era: Era, url: string, login: string): Promise<AnyClient> {
  return (await oauthSession(era, url, login)).client;
}

/**
 * {@link oauthClient}, and `authorizeAgain`: after a call failed for want of authorization (a
 * step-up asked for by a 403 `insufficient_scope`), logs in again headlessly where the client
 * was sent and hands the callback to the transport, so that the call can be retried.
 */
export async function oauthSession(era: Era, url: string, login: string): Promise<{ client: AnyClient; authorizeAgain(): Promise<void> }> {
  const provider = new MemoryProvider(`e2e-${era}`);
  const transport = () =>
    era === 'legacy' ? new LegacyHttp(new URL(url), { authProvider: provider as never }) : new ModernHttp(new URL(url), { authProvider: provider as never });
  const client = () =>
    era === 'legacy'
      ? new LegacyClient({ name: `e2e-${era}`, version: '1.0.0' })
      : new ModernClient({ name: `e2e-${era}`, version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } } as ConstructorParameters<
          typeof ModernClient
        >[1]);
  const finish = async (t: LegacyHttp | ModernHttp): Promise<void> => {
    const sent = provider.authorizationUrl;
    if (sent === undefined) throw new Error('the client did not start authorizing');
    provider.authorizationUrl = undefined;
    const callback = await headlessAuthorize(sent.href, login, REDIRECT);
    if (era === 'legacy') await (t as LegacyHttp).finishAuth(callback.searchParams.get('code')!);
    else await (t as ModernHttp).finishAuth(callback.searchParams);
  };
  const first = transport();
  const unauthorized = await (client() as LegacyClient).connect(first as never).then(
    () => undefined,
    (err: unknown) => err,
  );
  if (unauthorized === undefined) throw new Error('the server let an unauthorized client connect');
  if (era === 'legacy' && !(unauthorized instanceof LegacyUnauthorized)) throw unauthorized;
  await finish(first);
  const connected = client();
  const second = transport();
  await (connected as LegacyClient).connect(second as never);
  return { client: connected, authorizeAgain: () => finish(second) };
}
