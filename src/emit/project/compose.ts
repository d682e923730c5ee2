/**
 * `compose.yaml` (manifest `deploy: compose`): the server scaled out as docs/deploy.md describes —
 * three replicas built from the project's Dockerfile, serving Streamable HTTP, sharing state
 * through a Redis service (`<PREFIX>_REDIS_URL`, append-only file fsynced on every write), behind
 * HAProxy, which spreads requests over the replicas and routes a legacy session's requests by
 * their `Mcp-Session-Id` to the replica that opened it (learned from its response header).
 *
 * The replicas get every variable the server reads (the settings registry, runtime/process/variables.ts)
 * passed through from the operator's environment or `.env` (`${NAME:-}`: blank counts as unset),
 * except the ones the deployment fixes (transport, host, port, Redis URL); the state key is
 * required, as every replica must sign with the same one. Printed by hand, every value a
 * double-quoted YAML scalar (JSON string syntax), so the same IR gives the same bytes.
 */

import { SERVE_DEFAULTS, settingNames } from '../../../templates/runtime/process/variables.js';
import type { IrServer } from '../../ir/types.js';
import { HASH_HEADER } from '../header.js';
import { irVariables } from '../ts/entry.js';

/** Replicas of the server service. */
export const COMPOSE_REPLICAS = 3;
/** The port the reverse proxy publishes. */
export const COMPOSE_PROXY_PORT = 8080;

const q = (s: string): string => JSON.stringify(s);

/** The HAProxy configuration (inline in compose.yaml). */
function haproxyConfig(port: number): string[] {
  return [
    'global',
    '  log stdout format raw local0',
    'defaults',
    '  mode http',
    '  log global',
    '  option httplog',
    '  timeout connect 5s',
    // SSE streams of legacy sessions and listen streams stay open
    '  timeout client 1h',
    '  timeout server 1h',
    'resolvers docker',
    '  nameserver dns 127.0.0.11:53',
    '  hold valid 10s',
    'frontend mcp',
    `  bind :${COMPOSE_PROXY_PORT}`,
    '  default_backend replicas',
    'backend replicas',
    '  balance roundrobin',
    '  option httpchk',
    '  http-check send meth GET uri /healthz hdr Host localhost',
    // a legacy session is served by the replica that opened it: remember which from the response
    '  stick-table type string len 128 size 100k expire 2h',
    '  stick match req.hdr(mcp-session-id)',
    '  stick store-response res.hdr(mcp-session-id)',
    `  server-template replica- ${COMPOSE_REPLICAS} server:${port} check resolvers docker init-addr none`,
  ];
}

/** Renders compose.yaml for `ir`. */
export function emitCompose(ir: IrServer): string {
  const names = settingNames(ir.envPrefix);
  const port = SERVE_DEFAULTS.port;
  const fixed: Record<string, string> = {
    [names.transport]: 'http',
    [names.host]: '0.0.0.0',
    [names.port]: String(port),
    [names.redisUrl]: 'redis://redis:6379',
    [names.stateKey]: `\${${names.stateKey}:?set ${names.stateKey} to a random value of 32 characters or more (openssl rand -hex 32): every replica signs with it}`,
  };
  const passed = irVariables(ir)
    .filter((v) => v.transport !== 'stdio' && !(v.name in fixed))
    .map((v) => v.name);
  const lines = [
    `# ${COMPOSE_REPLICAS} replicas of ${ir.name} behind a reverse proxy, sharing justifications, limits and`,
    '# change notifications through Redis (docs/deploy.md of mcpgen). Set the variables in .env or the',
    `# environment (${names.stateKey} is required; give clients tokens in ${names.httpTokens} or an OAuth`,
    `# issuer in ${names.oauthIssuer}), then: docker compose up --build`,
    `# Clients connect to http://localhost:${COMPOSE_PROXY_PORT}/mcp (list other host names in ${names.allowedHosts}).`,
    'services:',
    '  redis:',
    '    image: "redis:7-alpine"',
    '    # every acknowledged write is on disk before the server is told so: no justification is lost in a crash',
    '    command: ["redis-server", "--appendonly", "yes", "--appendfsync", "always"]',
    '    volumes: ["redis-data:/data"]',
    '    healthcheck:',
    '      test: ["CMD", "redis-cli", "ping"]',
    '      interval: 5s',
    '      timeout: 3s',
    '      retries: 10',
    '    restart: unless-stopped',
    '  server:',
    '    build: .',
    '    command: ["--transport", "http"]',
    '    deploy:',
    `      replicas: ${COMPOSE_REPLICAS}`,
    '    depends_on:',
    '      redis:',
    '        condition: service_healthy',
    '    environment:',
    ...Object.entries(fixed).map(([k, v]) => `      ${k}: ${q(v)}`),
    ...passed.map((name) => `      ${name}: ${q(`\${${name}:-}`)}`),
    `    expose: [${q(String(port))}]`,
    '    restart: unless-stopped',
    '  proxy:',
    '    image: "haproxy:3.0-alpine"',
    '    depends_on: ["server"]',
    `    ports: [${q(`${COMPOSE_PROXY_PORT}:${COMPOSE_PROXY_PORT}`)}]`,
    '    configs:',
    '      - source: haproxy',
    '        target: /usr/local/etc/haproxy/haproxy.cfg',
    '    restart: unless-stopped',
    'configs:',
    '  haproxy:',
    '    content: |',
    ...haproxyConfig(port).map((l) => `      ${l}`),
    'volumes:',
    '  redis-data: {}',
  ];
  return HASH_HEADER + lines.join('\n') + '\n';
}
