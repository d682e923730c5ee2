/**
 * The generated server's `main`: answers `--help`, `--version` and `--print-config`, resolves
 * the settings and the serving options (flags win over `<PREFIX>_*` variables), builds the
 * server and serves it over stdio (the default) or Streamable HTTP. Bad settings are logged and
 * exit with code 1; a bad command line exits with code 2.
 *
 * This file is copied verbatim into every generated project.
 */

import { InMemoryServerEventBus } from '@modelcontextprotocol/server';
import { log, parseLogLevel, setLogLevel } from './core/log.js';
import type { OperationTool, ServerConfig } from './core/types.js';
import type * as OAuthExchange from './oauth/oauth-exchange.js';
import type { TokenExchanger } from './oauth/oauth-exchange.js';
import type * as OAuthResource from './oauth/oauth-resource.js';
import { allScopes, scopeNeeds } from './oauth/oauth-scopes.js';
import { missingArgumentVariables } from './operation/arguments.js';
import type { Counters } from './policy/counters.js';
import type { ServeOptions } from './process/command-line.js';
import { resolveServeOptions, runCommandLine } from './process/command-line.js';
import { describeUnmet, unmetRequirements } from './process/credentials.js';
import { describeBase, read, resolveSettings, settingsVariables } from './process/settings.js';
import { shutdownRoutine } from './process/shutdown.js';
import { DEFAULT_MAX_ARGUMENT_BYTES, schemeVariables } from './process/variables.js';
import type * as RedisShared from './redis/redis-shared.js';
import type { SharedStores } from './redis/redis-shared.js';
import type { JustificationsFactory } from './reflection/reflection-store.js';
import { listChanges } from './server/list-changes.js';
import type { PolicyLayer, ReflectionGuard, ServerExtensions, ServerFactory } from './server/server.js';
import { createServer } from './server/server.js';
import { warmUp } from './server/warm.js';
import { INSTANCE_ID, redisSettings, redisUrlSecrets } from './shared/shared-state.js';
import { stateKey } from './shared/state.js';
import { taskBounds } from './tasks/tasks-store.js';
// loaded only to serve over HTTP (its SDK package takes ~40 ms to load, which stdio does not need)
import type * as HttpServing from './transport/http.js';
import { STDOUT_BACKLOG, serveOnStdio } from './transport/stdio.js';

/** Room in an HTTP request body for what is not tool arguments (the JSON-RPC envelope, `_meta`, a client's answer to an input request). */
const BODY_ENVELOPE_BYTES = 262_144;

/** What the entry hands to {@link main} besides config and tools. */
export type MainOptions = Omit<ServerExtensions, 'reflection'> & {
  /** Makes the reflection gate, given the key hints are signed with (shared by instances with the same `<PREFIX>_STATE_KEY`) and what stored justifications must not hold. */
  reflection?: (key: Buffer, extra: { readonly redact: JustificationRedaction; readonly makeStore?: JustificationsFactory }) => ReflectionGuard;
  /** The reflection gate's store directory (listed by `--help`). */
  reflectionDir?: string;
  /** The policy's audit trail settings, when it keeps one (listed by `--help`; its `redact` fields are redacted from stored justifications too). */
  audit?: { readonly file?: string; readonly redact?: readonly string[] };
  /** Makes the policy layer (policy.ts `createPolicy` over the generated `policy`), given what it must never write down. */
  policy?: (context: {
    readonly envPrefix: string;
    readonly env: NodeJS.ProcessEnv;
    readonly secrets: () => readonly string[];
    readonly counters?: Counters;
    readonly instance?: string;
  }) => ClosablePolicy;
};

/** What a stored justification must not hold (reflection-config.ts `JustificationRedaction`; not imported, so servers without a gate copy none of it). */
type JustificationRedaction = { readonly fields: readonly string[]; readonly secrets: () => readonly string[] };

/** The policy layer as main holds it: besides what the server uses, a start and a bounded close. */
type ClosablePolicy = PolicyLayer & { open?(): Promise<void>; close(timeoutMs?: number): Promise<void> };

/** Time given to the audit trail to write what it holds once the calls have drained, within the shutdown bound. */
const AUDIT_CLOSE_MS = 300;

/** Every secret value the server holds: API credentials, client tokens, the state key (never written to the audit trail). */
function secretValues(config: ServerConfig, env: NodeJS.ProcessEnv, tokens: ReadonlyMap<string, string>): string[] {
  const out = new Set<string>(tokens.keys());
  for (const scheme of config.securitySchemes ?? []) {
    for (const name of schemeVariables(scheme)) {
      const value = read(env, name);
      if (value) out.add(value);
    }
  }
  const vars = settingsVariables(config.envPrefix);
  const key = read(env, vars.stateKey);
  if (key) out.add(key);
  const introspection = read(env, vars.oauthClientSecret);
  if (introspection) out.add(introspection);
  const redis = read(env, vars.redisUrl);
  if (redis) for (const value of redisUrlSecrets(redis)) out.add(value);
  return [...out];
}

/** Runs the server this process is for; returns once it serves (or the command line was answered). */
export async function main(
  config: ServerConfig,
  tools: readonly OperationTool[],
  options: MainOptions = {},
  argv: readonly string[] = process.argv.slice(2),
  env: NodeJS.ProcessEnv = process.env,
): Promise<void> {
  if (
    runCommandLine(argv, config, tools, {
      ...(options.reflectionDir !== undefined ? { reflectionDir: options.reflectionDir } : {}),
      ...(options.audit !== undefined ? { audit: options.audit } : {}),
    })
  )
    return;
  const vars = settingsVariables(config.envPrefix);
  const level = parseLogLevel(env[vars.logLevel]);
  if (level) setLogLevel(level);
  let serve: ServeOptions;
  let factory: ServerFactory;
  let reflection: ReflectionGuard | undefined;
  let policy: ClosablePolicy | undefined;
  let exchange: TokenExchanger | undefined;
  let shared: SharedStores | undefined;
  try {
    // also refuses tokens while a scheme takes its credential from the Authorization header
    serve = resolveServeOptions(argv, config, env);
    const settings = resolveSettings(config, env);
    const key = stateKey(config.envPrefix, env);
    // warned for the gate only: its hints are meant to outlive a process (24 h); an input round lives at most
    // 15 minutes, so a generated key fails one only across a restart mid-call or on another instance
    if (key.generated && options.reflection)
      log(
        'warn',
        `${config.name}: ${config.envPrefix}_STATE_KEY is not set, so a key was generated for this run: reflection-gate hints and input rounds are not accepted after a restart or by another instance; set it (32 characters or more) to share them`,
      );
    const { reflection: makeReflection, reflectionDir: _dir, audit: _audit, policy: makePolicy, ...extensions } = options;
    // token exchange for schemes with `exchange` (needs the server's client credentials; bound once the resource server exists)
    const exchanging = serve.oauth?.introspection !== undefined && (config.securitySchemes ?? []).some((s) => s.kind === 'bearer' && s.exchange !== undefined);
    if (exchanging) extensions.exchange = (auth, spec, scheme) => exchange!(auth, spec, scheme);
    const secrets = secretValues(config, env, serve.tokens);
    // several instances share justifications, limits, task state and change notifications through Redis
    const redis = redisSettings(config.envPrefix, config.name, env);
    if (redis !== undefined)
      shared = await ((await import('./redis/redis-shared.js')) as typeof RedisShared).sharedStores(redis, config.name, taskBounds(config.envPrefix, env));
    reflection = makeReflection?.(key.key, {
      redact: { fields: options.audit?.redact ?? [], secrets: () => secrets },
      ...(shared ? { makeStore: shared.makeStore } : {}),
    });
    policy = makePolicy?.({
      envPrefix: config.envPrefix,
      env,
      secrets: () => secrets,
      ...(shared ? { counters: shared.counters, instance: INSTANCE_ID } : {}),
    });
    factory = createServer(config, tools, env, {
      ...extensions,
      ...(reflection ? { reflection } : {}),
      ...(policy ? { policy } : {}),
      ...(shared !== undefined ? { taskStore: shared.tasks, roundNonces: shared.rounds } : {}),
      settings,
      stateKey: key.key,
      identity: serve.clientIdentity,
      ...(serve.transport === 'stdio' ? { outputBacklog: STDOUT_BACKLOG } : {}),
    });
    if (shared !== undefined) factory.share?.(shared.bus);
  } catch (err) {
    log('error', `${config.name}: cannot start: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  }
  const closeAll = async (): Promise<void> => {
    await policy?.close(AUDIT_CLOSE_MS);
    await shared?.close();
  };

  const settings = factory.settings;
  const where = settings.baseUrl !== undefined ? describeBase(settings) : `WARNING: ${vars.baseUrl} is not set, tool calls will fail until it is`;
  const gate = reflection ? ` (${reflection.exposesPersistTool ? 'reflection gate with persist_justification' : 'reflection gate, sampling only'})` : '';
  let on: string;
  if (serve.transport === 'http') {
    const { serveHttp } = (await import('./transport/http.js')) as typeof HttpServing;
    // the listen streams' bus: resource changes' (fed by the shared bus), else the shared bus, else one of this process (list changes)
    const streams = factory.bus ?? shared?.bus ?? new InMemoryServerEventBus();
    // a 401 asks for the scopes set (else every scope some tool, prompt or resource needs); the metadata lists those and all of them (clients register with them)
    const needs = scopeNeeds([...tools, ...(options.extraTools ?? [])], options.scoped);
    const challengeScopes = serve.oauth?.scopes ?? allScopes(needs);
    const scopesSupported = [...new Set([...challengeScopes, ...allScopes(needs)])];
    const oauth =
      serve.oauth !== undefined
        ? ((await import('./oauth/oauth-resource.js')) as typeof OAuthResource).resourceServer(
            { ...serve.oauth, scopesSupported, challengeScopes, resourceName: config.name, timeoutMs: settings.timeoutMs },
            (message) => log('error', `${config.name}: OAuth: ${message}`),
          )
        : undefined;
    const credentials = serve.oauth?.introspection;
    if (oauth !== undefined && credentials !== undefined)
      exchange = ((await import('./oauth/oauth-exchange.js')) as typeof OAuthExchange).tokenExchanger({
        tokenEndpoint: () => oauth.tokenEndpoint(),
        clientId: credentials.clientId,
        clientSecret: credentials.clientSecret,
        timeoutMs: settings.timeoutMs,
      });
    for (const s of config.securitySchemes ?? []) {
      if (s.kind === 'bearer' && s.exchange !== undefined && exchange === undefined)
        log(
          'warn',
          `${config.name}: security scheme ${JSON.stringify(s.name)} exchanges OAuth access tokens, which needs ${vars.oauthIssuer}, ${vars.oauthClientId} and ${vars.oauthClientSecret}; until they are set it sends ${s.env.token}`,
        );
    }
    const handle = await serveHttp(
      (ctx) => factory({ era: ctx.era, headers: ctx.headers, ...(ctx.identity !== undefined ? { identity: ctx.identity } : {}) }),
      {
        name: config.name,
        version: config.version,
        host: serve.host,
        port: serve.port,
        allowedHosts: serve.allowedHosts,
        allowedOrigins: serve.allowedOrigins,
        tokens: serve.tokens,
        ...(oauth !== undefined ? { oauth, scopeNeeds: needs } : {}),
        sessionIdleMs: serve.sessionIdleMs,
        maxSessions: serve.maxSessions,
        maxSessionsPerClient: serve.maxSessionsPerClient,
        drainMs: serve.drainMs,
        // a body larger than the largest arguments plus room for the rest of the message is refused unparsed
        maxBodyBytes: (settings.maxArgumentBytes ?? DEFAULT_MAX_ARGUMENT_BYTES) + BODY_ENVELOPE_BYTES,
        tokensFrom: `${vars.httpTokens} (or ${vars.httpTokensFile})`,
        bodyLimitHint: `tool arguments may take ${settings.maxArgumentBytes ?? DEFAULT_MAX_ARGUMENT_BYTES} bytes (${vars.maxArgumentBytes}), the rest of the message ${BODY_ENVELOPE_BYTES}`,
        // x-mcp-header checks and subscription access, before the SDK serves a modern request
        precheck: (body, ctx) =>
          factory.precheck(body, { era: 'modern', headers: ctx.headers, ...(ctx.identity !== undefined ? { identity: ctx.identity } : {}) }),
        ...(factory.taskListen ? { taskListen: factory.taskListen } : {}),
        bus: streams,
        // legacy sessions live in the instance that opened them (docs/deploy.md: route by Mcp-Session-Id)
        ...(shared !== undefined
          ? {
              unknownSession: ` on this instance: a legacy session (clients before MCP 2026-07-28) is served only by the instance that opened it, so the load balancer must route requests by their Mcp-Session-Id header (sticky sessions); it may also have expired or been closed. Start a new session`,
            }
          : {}),
      },
    ).catch((err: unknown) => {
      log('error', `${config.name}: cannot listen on ${serve.host}:${serve.port}: ${err instanceof Error ? err.message : String(err)}`);
      process.exit(1);
    });
    listChanges.install({ sessions: () => handle.sessions(), streams, ...(shared !== undefined ? { shared: shared.bus } : {}) });
    // the bound holds whatever the calls or the audit trail wait for
    const shutdown = shutdownRoutine(
      config.name,
      serve.drainMs + AUDIT_CLOSE_MS + 300,
      () => handle.close().then(closeAll),
      `, finishing calls in flight (at most ${serve.drainMs} ms)`,
    );
    process.once('SIGINT', () => shutdown('SIGINT'));
    process.once('SIGTERM', () => shutdown('SIGTERM'));
    const clients = [
      ...(serve.tokens.size > 0 ? [`${serve.tokens.size} client token${serve.tokens.size === 1 ? '' : 's'}`] : []),
      ...(serve.oauth !== undefined ? [`OAuth access tokens of ${serve.oauth.issuer}`] : []),
    ];
    on = `Streamable HTTP at ${handle.url}${clients.length > 0 ? ` (${clients.join(', ')})` : ''}`;
  } else {
    serveOnStdio(factory, config.name, serve.clientIdentity, closeAll, serve.drainMs + AUDIT_CLOSE_MS + 300);
    on = 'stdio';
  }
  // a torn last line of the audit trail (a crash) is repaired now, not at the first event
  void policy?.open?.();
  // the first tool call should not pay for loading the request and validation machinery: readied
  // now, while the client connects
  if (factory.toolCount > 0) warmUp();
  log(
    settings.baseUrl !== undefined ? 'info' : 'warn',
    `${config.name} ${config.version}: MCP server on ${on} with ${factory.toolCount} tools${gate}; ${where}`,
  );
  if (shared !== undefined)
    log(
      'info',
      `${config.name}: justifications, limits, MCP task state and change notifications are shared through Redis at ${shared.redis.settings.shown} (key prefix ${shared.redis.settings.prefix}:)`,
    );
  for (const u of unmetRequirements(tools, config.securitySchemes ?? [], env, { transport: serve.transport }))
    log('warn', `${config.name}: ${describeUnmet(u)}`);
  for (const m of missingArgumentVariables(tools, env)) {
    log(
      'warn',
      `${config.name}: ${m.variable} is not set, so hidden arguments of ${m.tools.join(', ')} have no value; those tools will fail until it is set and the server restarted`,
    );
  }
}
