/**
 * Static project files of the generated server: package.json and tsconfig.json (printed from
 * objects with a fixed key order, never templated), .gitignore and the README (handlebars,
 * `noEscape` + `strict`, spec text only through the `md` helper).
 */
import type Handlebars from 'handlebars';
import { CODE_DEFAULTS, SERVE_DEFAULTS, settingNames } from '../../../templates/runtime/process/variables.js';
import { handlebarsRuntime, projectTemplates } from '../../core/lazy.js';
import { usesCode } from '../../ir/features/discovery.js';
import { DEFAULT_PREPROCESSOR_TIMEOUT_MS, runOrder } from '../../ir/features/preprocessors.js';
import type { IrHandlerRef, IrOperationTool, IrResource, IrSecurityScheme, IrServer } from '../../ir/types.js';
import { HASH_HEADER, MD_HEADER } from '../header.js';
import { irVariables } from '../ts/entry.js';
import { clientLines, shellQuote } from './client-lines.js';
import { credentialPlan } from './credentials.js';
import { packageDependencies } from './dependencies.js';
import { clientConfigs, clientHeaderSchemes, clientVariables, defaultDescription, ENTRY_POINT, MCPB_VERSION } from './ship.js';

/** A POSIX shell word for any text (re-exported: the README's `sh` helper and older callers). */
export { shellQuote };

const json = (v: unknown) => JSON.stringify(v, null, 2) + '\n';

/**
 * Renders the generated package.json: publishable (`private` only when the manifest's
 * `package.private` says so), the compiled server as its `bin`, built before every pack; its
 * dependencies are mcpgen's and the manifest's (./dependencies.ts). On disk it is merged with
 * what the user added (write/merge-file.ts).
 */
export function emitPackageJson(ir: IrServer): string {
  const pkg: Record<string, unknown> = { name: ir.name, version: ir.version };
  if (ir.package?.private === true) pkg.private = true;
  pkg.description = ir.description ?? defaultDescription(ir);
  pkg.keywords = ['mcp', 'mcp-server', 'model-context-protocol'];
  if (ir.package?.author !== undefined) pkg.author = ir.package.author;
  if (ir.package?.license !== undefined) pkg.license = ir.package.license;
  if (ir.package?.repository !== undefined) pkg.repository = { type: 'git', url: ir.package.repository };
  Object.assign(pkg, {
    type: 'module',
    bin: { [ir.name]: ENTRY_POINT },
    // every project is also a library: `import { createServer } from '<name>'` (src/index.ts)
    exports: { '.': { types: './dist/index.d.ts', default: './dist/index.js' } },
    types: 'dist/index.d.ts',
    files: ['dist', '.env.example'],
    engines: { node: '>=20.19.0' },
    scripts: {
      build: 'tsc -p tsconfig.json',
      start: `node ${ENTRY_POINT}`,
      prepack: 'npm run build',
      ...(ir.policy?.audit?.chain === true ? { 'verify-audit': 'node dist/runtime/policy/verify-audit.js' } : {}),
    },
    ...packageDependencies(ir),
  });
  return json(pkg);
}

/** Renders the generated tsconfig.json (strict; avoids options TypeScript 7 removed; declarations for a library, `entry: custom`). */
export function emitTsconfig(ir?: IrServer): string {
  return json({
    compilerOptions: {
      target: 'es2022',
      // the library entry's types (src/index.ts); the init starter's tsconfig has no IR
      ...(ir !== undefined ? { declaration: true } : {}),
      module: 'nodenext',
      moduleResolution: 'nodenext',
      strict: true,
      noUnusedLocals: true,
      noUnusedParameters: true,
      skipLibCheck: true,
      rootDir: 'src',
      outDir: 'dist',
      types: ['node'],
    },
    include: ['src/**/*.ts'],
  });
}

/** Renders the generated .gitignore (secrets in `.env` and packed bundles stay out of the repository). */
export function emitGitignore(): string {
  return HASH_HEADER + 'node_modules/\ndist/\n.env\n*.mcpb\n';
}

/** Markdown-safe inline text: one line, no HTML, table pipes and backticks escaped. */
export function mdText(value: unknown): string {
  return String(value ?? '')
    .replace(/\r\n?|[\n\u2028\u2029\u0085]/g, ' ')
    .replace(/[\\`*_[\]<>|#]/g, (c) => '\\' + c)
    .trim();
}

/**
 * Inline code for any text: one line, table pipes escaped (GFM tables split on `|` even inside
 * code), and fenced with more backticks than any run of them in the text.
 */
export function mdCode(value: string): string {
  const line = value.replace(/\r\n?|[\n\u2028\u2029\u0085]/g, ' ').replace(/\|/g, '\\|');
  const longest = Math.max(0, ...[...line.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(longest + 1);
  const pad = line.startsWith('`') || line.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${line}${pad}${fence}`;
}

let readme: Handlebars.TemplateDelegate | undefined;

/** ` (a, b)` of the non-empty notes, or nothing. */
function notes(list: readonly string[]): string {
  const kept = list.filter(Boolean);
  return kept.length > 0 ? ` (${kept.join(', ')})` : '';
}

/** How a scheme's credentials travel, as Markdown (spec text escaped with {@link mdText}). */
function schemeHow(s: IrSecurityScheme): string {
  switch (s.kind) {
    case 'apiKey':
      return `API key in the ${mdText(s.paramName)} ${s.in === 'header' ? 'header' : s.in === 'query' ? 'query parameter' : 'cookie'}`;
    case 'basic':
      return 'HTTP basic authentication';
    case 'bearer':
      return s.fallbackFrom !== undefined
        ? `static \`Authorization: Bearer\` token (the spec's ${mdText(s.fallbackFrom)} is not performed by the server: obtain a token yourself)`
        : '`Authorization: Bearer` token';
    case 'oauth2ClientCredentials': {
      const scopes = s.scopes.length > 0 ? `, scopes ${s.scopes.map(mdText).join(', ')}` : '';
      const relative = /^https?:\/\//i.test(s.tokenUrl) ? '' : ' (relative to the base URL)';
      return `OAuth 2.0 client credentials: a token from ${mdText(s.tokenUrl)}${relative}${scopes}, sent as \`Authorization: Bearer\`, cached until it expires and renewed once when the API answers 401`;
    }
  }
}

/** The variables of a scheme, as inline code. */
function schemeVars(s: IrSecurityScheme): string {
  return Object.values(s.env)
    .map((v) => `\`${v}\``)
    .join(', ');
}

/** The variables hidden arguments are read from, each with the tool arguments it fills, as Markdown. */
function argumentVariables(ir: IrServer): Array<{ name: string; uses: string }> {
  const uses = new Map<string, string[]>();
  for (const t of ir.tools) {
    const fields = (t.body?.fields ?? []).map((f) => ({ arg: `${t.body!.arg}.${f.name}`, fixed: f.fixed }));
    for (const a of [...t.params, ...(t.body ? [t.body] : []), ...fields]) {
      if (a.fixed && 'env' in a.fixed) uses.set(a.fixed.env, [...(uses.get(a.fixed.env) ?? []), `${mdCode(t.name)} (${mdCode(a.arg)})`]);
    }
  }
  return [...uses].sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)).map(([name, list]) => ({ name: mdCode(name), uses: list.join(', ') }));
}

/** The credentials a tool needs, as Markdown. */
function toolAuth(t: IrOperationTool): string {
  if (t.security.length === 0) return 'none';
  const alternatives = t.security.filter((a) => a.length > 0).map((a) => a.map(mdText).join(' + '));
  return alternatives.join(' or ') + (t.security.some((a) => a.length === 0) ? ' (optional)' : '');
}

/** The README's table of tools that accept one of several credentials (see credentials.ts for which is asked). */
function credentialChoices(ir: IrServer): Array<{ tools: string; alternatives: string }> {
  return credentialPlan(ir).choices.map((c) => ({
    tools:
      (c.tools.length > 6 ? `${c.tools.slice(0, 5).map(mdCode).join(', ')} and ${c.tools.length - 5} more` : c.tools.map(mdCode).join(', ')) +
      (c.optional ? ' (also without credentials)' : ''),
    alternatives: c.alternatives
      .map((a, i) => `${a.variables.map(mdCode).join(' + ')} (${a.schemes.map(mdText).join(' + ')})${i === c.asked ? ', asked' : ''}`)
      .join(' **or** '),
  }));
}

/** `handler \`src/handlers/x.ts\` (\`fn\`)` for a handler reference. */
function handlerText(h: IrHandlerRef): string {
  return `handler ${mdCode(`src/${h.file}`)} (${mdCode(h.exportName)})`;
}

/** Where a resource's content comes from, as Markdown. */
function resourceText(r: IrResource): string {
  return r.content.kind === 'handler' ? handlerText(r.content.handler) : r.content.kind === 'blob' ? 'embedded (binary)' : 'embedded text';
}

/** Renders the generated README.md. */
export function emitReadme(ir: IrServer): string {
  if (!readme) {
    const hb = handlebarsRuntime().create();
    hb.registerHelper('md', (v: unknown) => mdText(v));
    hb.registerHelper('json', (v: unknown) => JSON.stringify(v, null, 2));
    hb.registerHelper('sh', (v: unknown) => shellQuote(String(v)));
    hb.registerHelper('mdcode', (v: unknown) => mdCode(String(v)));
    readme = hb.template(projectTemplates()['README.md.hbs']!);
  }
  const p = ir.envPrefix;
  const variables = irVariables(ir);
  const needed = clientVariables(variables);
  const clients = clientConfigs(ir);
  const lines = clientLines(ir);
  const names = settingNames(p);
  const own = clientHeaderSchemes(ir);
  const http = {
    url: clients.http.url,
    port: SERVE_DEFAULTS.port,
    host: SERVE_DEFAULTS.host,
    configs: clients.http,
    claudeCodeAdd: lines.claudeHttp,
    inspector: lines.inspectorHttp,
    tokenHeader: !own.some((h) => h.header.toLowerCase() === 'authorization'),
    clientHeaders: own.map((h) => mdCode(h.header)).join(', '),
    transportVar: names.transport,
    portVar: names.port,
    hostVar: names.host,
    allowedHostsVar: names.allowedHosts,
    allowedOriginsVar: names.allowedOrigins,
    tokensVar: names.httpTokens,
    tokensFileVar: names.httpTokensFile,
    allowAnonymousVar: names.allowAnonymous,
    publicUrlVar: names.publicUrl,
    oauthIssuerVar: names.oauthIssuer,
    oauthAudienceVar: names.oauthAudience,
    oauthScopesVar: names.oauthScopes,
    oauthJwksVar: names.oauthJwksUrl,
    oauthIntrospectionVar: names.oauthIntrospectionUrl,
    oauthClientIdVar: names.oauthClientId,
    oauthClientSecretVar: names.oauthClientSecret,
    clientVar: names.client,
    stateKeyVar: names.stateKey,
    redisUrlVar: names.redisUrl,
    sessionIdleVar: names.sessionIdleMs,
    maxSessionsVar: names.maxSessions,
    drainVar: names.drainMs,
  };
  return (
    MD_HEADER +
    readme({
      name: ir.name,
      version: ir.version,
      description: ir.description ?? '',
      baseUrl: ir.baseUrl ?? '',
      envPrefix: p,
      toolCount: ir.tools.length + ir.extraTools.length,
      tools: [
        ...ir.tools.map((t) => ({ name: t.name, request: mdCode(`${t.method} ${t.path}`), title: t.title ?? '', auth: toolAuth(t) })),
        ...ir.extraTools.map((t) => ({ name: t.name, request: handlerText(t.handler), title: t.title ?? '', auth: 'none' })),
      ],
      hasHandlers: ir.extraTools.length > 0 || ir.resourceTemplates.length > 0 || ir.resources.some((r) => r.content.kind === 'handler'),
      customEntry: ir.entry === 'custom',
      prompts: ir.prompts.map((p) => ({
        name: mdCode(p.name),
        title: p.title ?? '',
        args: p.arguments.map((a) => `${mdCode(a.name)}${a.required ? '*' : ''}`).join(', '),
      })),
      resources: [
        ...ir.resources.map((r) => ({ uri: mdCode(r.uri), name: r.name, mimeType: r.mimeType ?? '', content: resourceText(r) })),
        ...ir.resourceTemplates.map((t) => ({
          uri: mdCode(t.uriTemplate),
          name: t.name,
          mimeType: t.mimeType ?? '',
          content: `template, ${handlerText(t.handler)}`,
        })),
      ],
      concerns: ir.concerns && {
        enforce: ir.concerns.enforce,
        declarations: ir.concerns.declarations.map((c) => ({
          name: mdCode(c.name),
          values: c.values.map(mdCode).join(', '),
          default: c.default ?? '',
          description: c.description ?? '',
        })),
      },
      codeMode: usesCode(ir) && {
        everywhere: ir.discovery === 'code',
        presets: Object.entries(ir.presetDiscovery ?? {})
          .filter(([, m]) => m === 'code')
          .map(([n]) => mdCode(n))
          .join(', '),
        timeoutVar: names.codeTimeoutMs,
        memoryVar: names.codeMemoryBytes,
        callsVar: names.codeMaxCalls,
        outputVar: names.codeMaxOutputBytes,
        consoleVar: names.codeMaxConsoleBytes,
        runsVar: names.codeMaxRuns,
        auditTextVar: names.codeAuditText,
        ...CODE_DEFAULTS,
      },
      reflection: ir.reflection && {
        storeDir: ir.reflection.storeDir,
        mode: ir.reflection.mode,
        sampling: ir.reflection.mode !== 'host',
        host: ir.reflection.mode !== 'sampling',
        gates: Object.entries(ir.reflection.gates).map(([tool, gates]) => ({
          tool,
          gates: gates.map((g) => `${mdCode(g.domain)}: ${mdCode(g.prompt)}`).join(', '),
        })),
      },
      preprocessors: runOrder(ir.preprocessors).map((p, i) => ({
        order: i + 1,
        name: p.name,
        after: p.after.length > 0 ? p.after.map(mdCode).join(', ') : '',
        timeout: `${p.timeoutMs ?? DEFAULT_PREPROCESSOR_TIMEOUT_MS} ms`,
        onError: p.onError ?? 'skip',
        handler: handlerText(p.handler),
      })),
      hasAuth: ir.securitySchemes.length > 0,
      schemes: ir.securitySchemes.map((s) => ({ name: s.name, how: schemeHow(s), vars: schemeVars(s) })),
      credentialChoices: credentialChoices(ir),
      fromClient: own.map((h) => ({ scheme: h.scheme.name, header: mdCode(h.header), basic: h.scheme.kind === 'basic', bearer: h.scheme.kind === 'bearer' })),
      http,
      argumentVariables: argumentVariables(ir),
      variables: variables.map((v) => ({
        name: mdCode(v.name),
        default: v.default !== undefined ? mdCode(v.default) : v.required ? '(none: required)' : '(none)',
        meaning: mdText(v.description) + notes([v.transport === 'http' ? 'HTTP only' : v.transport === 'stdio' ? 'stdio only' : '', v.secret ? 'secret' : '']),
      })),
      clientVariables: needed.map((v) => v.name),
      clientVariableList: needed.map((v) => mdCode(v.name)).join(', '),
      claudeCodeAdd: lines.claudeStdio,
      inspector: lines.inspectorStdio,
      clientConfigs: clients,
      mcpbVersion: MCPB_VERSION,
      entryPoint: ENTRY_POINT,
      private: ir.package?.private === true,
    })
  );
}
