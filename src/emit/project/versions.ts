/**
 * Versions the generated project depends on. They are the versions mcpgen's own runtime shims
 * are type-checked and tested against (a unit test keeps them equal to mcpgen's package.json).
 */
export const GENERATED_DEPENDENCIES = {
  /** The official MCP SDK, v2: one server serves both protocol eras (2025-11-25 and earlier, and 2026-07-28). */
  '@modelcontextprotocol/server': '2.4.0',
  /** Streamable HTTP on node:http (runtime/transport/http.ts). */
  '@modelcontextprotocol/node': '2.1.2',
  ajv: '8.20.0',
  'ajv-formats': '3.0.1',
  /** OAuth access tokens (JWT) checked against the authorization server's keys (runtime/oauth/oauth-resource.ts): no dependencies; 6.x supports Node 20. */
  jose: '6.2.17',
  /**
   * Schema patterns matched in linear time (runtime/core/pattern.ts): pure JavaScript RE2, so one
   * crafted argument cannot stall the server the way a backtracking `^(a+)+$` does. Node 20+.
   */
  re2js: '2.10.0',
  /** Params schemas of the custom methods (concerns/update, preprocessors/run); the v2 SDK needs it at run time too. */
  zod: '4.6.7',
  /** Requests over a unix socket (`unix:` base URLs, runtime/operation/socket.ts); loaded only when one is used. 7.x supports Node 20.18.1+. */
  undici: '7.30.2',
  /**
   * Shared state of several instances (`<PREFIX>_REDIS_URL`: runtime/redis*.ts): the Redis client,
   * and the rate limiter over it. Every project declares them, since any server may be scaled out
   * by its operator with a variable alone; they are loaded only when the URL is set. Node 12+/14+.
   */
  ioredis: '5.11.1',
  'rate-limiter-flexible': '11.4.0',
} as const;

/** Dependencies a generated project has only when its manifest uses the feature that needs them. */
export const OPTIONAL_DEPENDENCIES = {
  /** Prompt templates (runtime/primitives/prompts.ts; reflection.ts renders gate prompts and prompt arguments). */
  handlebars: '4.7.10',
  /** Search mode (`discovery: search`): runtime/search/search-text.ts stems query words as the build stemmed the index's (Porter; ESM, no dependencies, Node 16+). */
  stemmer: '2.0.1',
  /**
   * Code mode's sandbox (`discovery: code`, runtime/code/sandbox.ts): QuickJS compiled to WebAssembly —
   * no native build on Node 20 (isolated-vm needs a C++ toolchain there), no Node APIs inside,
   * a new instance per `execute` in a few milliseconds, its memory bounded by the instance's.
   */
  'quickjs-emscripten': '0.32.0',
  /** Code mode: strips TypeScript types from `execute`'s code (runtime/code/code-mode.ts), keeping line numbers. */
  sucrase: '3.35.1',
  /**
   * The policy layer's spans (runtime/policy/telemetry.ts): a no-op unless the process registers an
   * OpenTelemetry SDK. 1.9.x: the newest the OpenTelemetry SDK 2.x accepts (it wants < 1.10).
   */
  '@opentelemetry/api': '1.9.1',
  /**
   * The audit trail as OpenTelemetry log records (runtime/policy/audit-otel.ts), so a collector merges the
   * trails of several instances: a no-op unless the process registers a LoggerProvider. 0.223.1:
   * the logs API released with the SDK 2.12 line (Node 18.19+/20.6+, API < 1.10).
   */
  '@opentelemetry/api-logs': '0.223.1',
  /** Projection of tool results (`results.projection`: runtime/operation/projection.ts evaluates the `fields` JMESPath expression). */
  '@jmespath-community/jmespath': '1.3.0',
} as const;

/** Dev dependencies of the generated project. */
export const GENERATED_DEV_DEPENDENCIES = {
  '@types/node': '20.19.43',
  typescript: '7.0.2',
} as const;
