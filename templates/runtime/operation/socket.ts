/**
 * API requests over a local (unix domain) socket, for a base URL such as
 * `unix:/var/run/docker.sock:/v1.43` (see settings.ts): requests to {@link SOCKET_ORIGIN} are
 * sent by undici's `fetch` with an `Agent` that connects to the socket instead of a TCP host.
 * Requests to any other origin (an absolute OAuth token URL, a redirect elsewhere) use the
 * global `fetch` as usual. undici is loaded on the first socket request only, so servers that
 * speak to an http(s) API never load it.
 */
import type { Agent } from 'undici';
import { SOCKET_ORIGIN } from '../process/settings.js';

/** One connection pool per socket path, shared by every call of the server. */
const agents = new Map<string, Promise<{ agent: Agent; fetch: typeof import('undici').fetch }>>();

function agentFor(socketPath: string): Promise<{ agent: Agent; fetch: typeof import('undici').fetch }> {
  let entry = agents.get(socketPath);
  if (!entry) {
    entry = import('undici').then((undici) => ({ agent: new undici.Agent({ connect: { socketPath } }), fetch: undici.fetch }));
    agents.set(socketPath, entry);
  }
  return entry;
}

function urlOf(input: Parameters<typeof fetch>[0]): string {
  return typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
}

/**
 * A `fetch` that sends requests for {@link SOCKET_ORIGIN} through the unix socket at
 * `socketPath` (redirects those requests follow stay on the socket) and everything else through
 * `fallback` (default: the global `fetch`).
 */
export function socketFetch(socketPath: string, fallback: typeof fetch = fetch): typeof fetch {
  const send = async (input: Parameters<typeof fetch>[0], init?: RequestInit): Promise<Response> => {
    const url = urlOf(input);
    if (new URL(url).origin !== SOCKET_ORIGIN) return fallback(input, init);
    const { agent, fetch: undiciFetch } = await agentFor(socketPath);
    // undici's own fetch, so that the Agent and the fetch come from the same undici version (the
    // one built into Node may differ); its RequestInit and Response are the standard ones in
    // shape, but typed by undici's own declarations
    const response = await undiciFetch(url, { ...(init as object), dispatcher: agent } as Parameters<typeof undiciFetch>[1]);
    return response as unknown as Response;
  };
  return send as typeof fetch;
}

/** Closes the connection pools of every socket used so far (tests, shutdown). */
export async function closeSockets(): Promise<void> {
  const all = [...agents.values()];
  agents.clear();
  await Promise.all(all.map(async (entry) => (await entry).agent.close()));
}
