/**
 * Concern filtering, the protocol part. `installConcerns` wires one v2 SDK `Server` instance for
 * the protocol era it serves (`era`).
 *
 * Legacy era (≤ 2025-11-25: initialize, one instance per session). A client sets its
 * preferences by any of:
 *  1. the initialize request: `capabilities.experimental.concerns` = `{ <concern>: <value> }`
 *     and/or `capabilities.experimental.concernPreset` = `{ name: <preset name> }` (an object:
 *     MCP requires every experimental capability to be one), read through
 *     `server.getClientCapabilities()`;
 *  2. the `notifications/initialized` params: `{ concerns: {...}, concernPreset?: <name> }`
 *     (`preset` is accepted too);
 *  3. the `concerns/update` request: `{ concerns?: {...}, preset?: <name> }` (partial, idempotent;
 *     `null` unsets a concern; a preset replaces all preferences before `concerns` is applied);
 *  4. per-request `_meta` entries: `_meta["io.mcpgen/concernPreset"]` = `<preset name>` and/or
 *     `_meta["io.mcpgen/concerns"]` = `{ <concern>: <value> }`, which replace (the preset) and
 *     overlay (the concerns) the session's preferences for that request only.
 * After `concerns/update` changes what a kind of primitive shows, the matching
 * `notifications/<kind>/list_changed` is sent on this instance.
 *
 * Modern era (2026-07-28: no initialize, no session; over HTTP an instance per request).
 * `tools/list` must not vary per connection, so there is no session state: preferences come
 * ONLY from each request's `_meta` (channel 4, on top of nothing). `concerns/update` answers
 * -32602 telling the client to send its preferences in `_meta`; no list_changed is sent.
 *
 * The request's active preset (`activePreset`): the one its `_meta` names, else (legacy era) the
 * one the session selected last through channels 1–3 (`concerns` sent later apply on top of it
 * and keep it active), else none. The server lists the search tools instead of its catalogue when
 * that preset is in search mode (manifest `discovery.presets`): a `concerns/update` that changes
 * the mode (`toolListMode`) sends `notifications/tools/list_changed` too.
 *
 * A preset is always named under a key of its own, never inside the `{ <concern>: <value> }`
 * map, so a concern may be called `preset`. Wherever both are given, the preset applies first
 * and the concerns on top of it. Later channels override earlier ones. `concerns/list` returns
 * the declarations (both eras). Invalid preferences in a request (3, 4) fail with JSON-RPC -32602
 * naming the allowed values; in the initialize/initialized channels (1, 2), which cannot answer,
 * valid entries are applied and the problems logged.
 *
 * Legacy era: this module handles `notifications/initialized` itself (the SDK's own handler
 * validates it with a schema that strips unknown params): it removes the SDK's handler and
 * serves the notification from `server.fallbackNotificationHandler`, chaining to any fallback
 * set before, and still calls `server.oninitialized` afterwards, so set that as usual. Set your
 * own `fallbackNotificationHandler` BEFORE `installConcerns` (or chain to this one), and do not
 * register a `notifications/initialized` handler after it.
 *
 * This file is copied verbatim into every generated project.
 */

import type { Server, ServerCapabilities, ServerContext } from '@modelcontextprotocol/server';
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import * as z from 'zod/v4';
import type { Era } from '../core/era.js';
import { isRecord } from '../core/json-shapes.js';
import { log } from '../core/log.js';
import type { PrimitiveGate, PrimitiveKind } from '../core/primitive-gate.js';
import { PRIMITIVE_KINDS, requestMeta } from '../core/primitive-gate.js';
import { withConcernMeta } from '../core/surface.js';
import type { ConcernDeclaration, ConcernMappings, ConcernPatch, ConcernPreferences, ConcernPresets } from './concerns.js';
import { applyPatch, ConcernSession, matches, validatePreferences } from './concerns.js';

/** Default `_meta` key carrying per-request preferences. */
export const DEFAULT_CONCERNS_META_KEY = 'io.mcpgen/concerns';

/** `_meta` key naming a preset for one request. */
export const CONCERN_PRESET_META_KEY = 'io.mcpgen/concernPreset';

/** Key naming a preset in the initialize request's `capabilities.experimental` and the initialized notification's params. */
export const CONCERN_PRESET_KEY = 'concernPreset';

/** The custom JSON-RPC methods this module answers. */
export const CONCERN_METHODS = ['concerns/list', 'concerns/update'] as const;

export type { ConcernMappings } from './concerns.js';

/** What the server publishes under `capabilities.experimental.concerns`. */
export type ConcernCapability = {
  declarations: ConcernDeclaration[];
  methods: string[];
  metaKey: string;
  /** Names of the presets a client may select, when any are declared. */
  presets?: string[];
  /** With presets: the key naming one in the initialize capabilities and initialized params (`concernPreset`). */
  presetKey?: string;
  /** With presets: the `_meta` key naming one for a single request (`io.mcpgen/concernPreset`). */
  presetMetaKey?: string;
};

/** The value to put under `capabilities.experimental.concerns` of the server's constructor options. */
export function concernCapability(
  declarations: readonly ConcernDeclaration[],
  metaKey: string = DEFAULT_CONCERNS_META_KEY,
  presets?: ConcernPresets,
): ConcernCapability {
  const out: ConcernCapability = { declarations: declarations.map((d) => ({ ...d, values: [...d.values] })), methods: [...CONCERN_METHODS], metaKey };
  if (presets !== undefined && Object.keys(presets).length > 0) {
    out.presets = Object.keys(presets);
    out.presetKey = CONCERN_PRESET_KEY;
    out.presetMetaKey = CONCERN_PRESET_META_KEY;
  }
  return out;
}

/** Options of `installConcerns`. */
export type InstallConcernsOptions = {
  readonly declarations: readonly ConcernDeclaration[];
  readonly mappings: ConcernMappings;
  /** Add `_meta.concerns` (the mapping) to published list entries (`decorate`). */
  readonly exposeInMeta: boolean;
  /** Refuse calls/gets/reads of filtered-out primitives (`assertAllowed`). */
  readonly enforce: boolean;
  /** `_meta` key for per-request preferences; default `io.mcpgen/concerns`. */
  readonly metaKey?: string;
  /** Named preference sets a client may select with `{ preset }`. */
  readonly presets?: ConcernPresets;
  /**
   * The capabilities the server was constructed with: list_changed notifications are sent only
   * for kinds declared with `listChanged: true`. Omitted ⇒ sent for every affected kind, and a
   * failure (capability not declared) is logged at debug level.
   */
  readonly capabilities?: ServerCapabilities;
  /**
   * The protocol era this server instance serves (the factory's `{ era }`): `legacy` keeps
   * session preferences (channels 1–4, list_changed); `modern` reads each request's `_meta` only.
   */
  readonly era: Era;
  /**
   * What `tools/list` lists for a request whose active preset is `preset` (undefined: none), when
   * it does not depend on the concern filter alone (search mode per preset): a `concerns/update`
   * after which it returns another value sends `notifications/tools/list_changed`.
   */
  readonly toolListMode?: (preset: string | undefined) => string;
};

/** Concern state and filtering of one session, returned by `installConcerns`. */
export type ConcernControl = PrimitiveGate & {
  /** The session's preferences (set through channels 1–3; always empty in the modern era). */
  readonly session: ConcernSession;
  /** Whether `assertAllowed` refuses hidden primitives. */
  readonly enforce: boolean;
  /** Preferences that apply to a request: the session's overlaid by its `_meta` entry. Throws -32602 when that entry is invalid. */
  preferencesFor(extra?: ServerContext): ConcernPreferences;
  /**
   * The concern preset active for a request: the one its `_meta` names, else (legacy era) the one
   * the session selected last, else undefined. Throws -32602 when `_meta` names an unknown preset.
   */
  activePreset(extra?: ServerContext): string | undefined;
};

/** Params of the custom methods and of the initialized notification: any object (checked by hand, to name the allowed values). */
const LooseParams = z.looseObject({}).optional();

const LABEL: Record<PrimitiveKind, string> = { tools: 'Tool', prompts: 'Prompt', resources: 'Resource', resourceTemplates: 'Resource template' };

/** Registers the concern channels and methods on `server` and returns the session's gate. */
export function installConcerns(server: Server, opts: InstallConcernsOptions): ConcernControl {
  const { declarations, mappings, presets = {} } = opts;
  const metaKey = opts.metaKey ?? DEFAULT_CONCERNS_META_KEY;
  const session = new ConcernSession();
  /** The preset the session selected last (legacy era). */
  let sessionPreset: string | undefined;
  const metaCache = new WeakMap<object, ConcernPatch>();
  let seeded = false;

  const modern = opts.era === 'modern';

  const unknownPreset = (preset: unknown): ProtocolError => {
    const names = Object.keys(presets);
    return new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `Unknown concern preset ${JSON.stringify(preset)} (${names.length > 0 ? `presets: ${names.map((n) => JSON.stringify(n)).join(', ')}` : 'this server declares no presets'})`,
    );
  };

  const invalid = (where: string, problems: readonly string[]): ProtocolError =>
    new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid concern preferences in ${where}: ${problems.join('; ')}`, { problems });

  /** Applies the initialize request's `capabilities.experimental.concerns`, once, when known. */
  const ensureSeeded = (): void => {
    if (seeded || modern) return;
    const caps = server.getClientCapabilities();
    if (caps === undefined) return;
    seeded = true;
    const raw = caps.experimental?.concerns;
    const named: unknown = caps.experimental?.[CONCERN_PRESET_KEY];
    const preset = isRecord(named) ? named.name : named;
    if (raw !== undefined || preset !== undefined) applyLenient('the initialize request (capabilities.experimental)', raw, preset);
  };

  /** Applies what is valid of `raw` to the session and logs the rest (notification channels). */
  const applyLenient = (where: string, raw: unknown, preset?: unknown): void => {
    if (preset !== undefined) {
      if (typeof preset === 'string' && Object.hasOwn(presets, preset)) {
        session.setAll(presets[preset] ?? {});
        sessionPreset = preset;
      } else log('warn', `concerns: unknown preset ${JSON.stringify(preset)} in ${where} ignored (presets: ${Object.keys(presets).join(', ') || 'none'})`);
    }
    if (raw === undefined) return;
    const check = validatePreferences(declarations, raw);
    if (check.problems.length > 0) log('warn', `concerns: ignoring invalid preferences in ${where}: ${check.problems.join('; ')}`);
    session.update(check.preferences);
  };

  /** The preferences of the preset a request's `_meta` names, or undefined when it names none; throws -32602 for an unknown one. */
  const metaPreset = (extra?: ServerContext): ConcernPreferences | undefined => {
    const name: unknown = requestMeta(extra)?.[CONCERN_PRESET_META_KEY];
    if (name === undefined) return undefined;
    if (typeof name !== 'string' || !Object.hasOwn(presets, name)) throw unknownPreset(name);
    return { ...(presets[name] ?? {}) };
  };

  const preferencesFor = (extra?: ServerContext): ConcernPreferences => {
    ensureSeeded();
    // modern era: no session state, a request's preferences start from nothing
    const base = metaPreset(extra) ?? (modern ? {} : undefined);
    const raw: unknown = requestMeta(extra)?.[metaKey];
    if (raw === undefined) return base ?? session.effective();
    let patch = isRecord(raw) ? metaCache.get(raw) : undefined;
    if (patch === undefined) {
      const check = validatePreferences(declarations, raw);
      if (check.problems.length > 0) throw invalid(`_meta[${JSON.stringify(metaKey)}]`, check.problems);
      patch = check.preferences;
      if (isRecord(raw)) metaCache.set(raw, patch);
    }
    return base !== undefined ? applyPatch(base, patch) : session.effective(patch);
  };

  const activePreset = (extra?: ServerContext): string | undefined => {
    ensureSeeded();
    const name: unknown = requestMeta(extra)?.[CONCERN_PRESET_META_KEY];
    if (name === undefined) return modern ? undefined : sessionPreset;
    if (typeof name !== 'string' || !Object.hasOwn(presets, name)) throw unknownPreset(name);
    return name;
  };

  const visibleWith = (kind: PrimitiveKind, id: string, prefs: ConcernPreferences): boolean => matches(mappings[kind]?.[id], prefs);

  const gate: ConcernControl = {
    session,
    enforce: opts.enforce,
    preferencesFor,
    activePreset,
    visible: (kind, id, extra) => visibleWith(kind, id, preferencesFor(extra)),
    assertAllowed: (kind, id, extra) => {
      if (!opts.enforce) return;
      const prefs = preferencesFor(extra);
      if (visibleWith(kind, id, prefs)) return;
      const mapping = mappings[kind]?.[id] ?? {};
      const clash = Object.keys(prefs)
        .filter((c) => Object.hasOwn(mapping, c) && !matches({ [c]: mapping[c] ?? [] }, prefs))
        .map((c) => `${c}=${prefs[c]}`);
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `${LABEL[kind]} ${id} is not available with the current concern preferences (${clash.join(', ')})`,
        { kind, id },
      );
    },
    decorate: <T extends object>(kind: PrimitiveKind, id: string, item: T): T => (opts.exposeInMeta ? withConcernMeta(item, mappings[kind]?.[id]) : item),
  };

  /** Ids of mapped primitives of `kind` visible with `prefs` (unmapped ones never change). */
  const visibleIds = (kind: PrimitiveKind, prefs: ConcernPreferences): string =>
    Object.keys(mappings[kind] ?? {})
      .filter((id) => visibleWith(kind, id, prefs))
      .join('\n');

  const notifyChanges = async (before: ConcernPreferences, after: ConcernPreferences, modeChanged: boolean): Promise<void> => {
    const changed = new Set(PRIMITIVE_KINDS.filter((k) => visibleIds(k, before) !== visibleIds(k, after)));
    if (modeChanged) changed.add('tools');
    const sends: ['tools' | 'prompts' | 'resources', () => Promise<void>][] = [];
    if (changed.has('tools')) sends.push(['tools', () => server.sendToolListChanged()]);
    if (changed.has('prompts')) sends.push(['prompts', () => server.sendPromptListChanged()]);
    if (changed.has('resources') || changed.has('resourceTemplates')) sends.push(['resources', () => server.sendResourceListChanged()]);
    for (const [cap, send] of sends) {
      if (opts.capabilities !== undefined && opts.capabilities[cap]?.listChanged !== true) continue;
      try {
        await send();
      } catch (err) {
        log('debug', `concerns: cannot send ${cap} list_changed`, err);
      }
    }
  };

  if (!modern) {
    // The SDK's own handler of this notification validates it with a schema that drops unknown
    // params, and the schema-taking form validates asynchronously, so a request sent right
    // after the notification could be served first. Handled instead, without delay, by the
    // fallback (which other notifications still reach as before).
    const previous = server.fallbackNotificationHandler;
    server.removeNotificationHandler('notifications/initialized');
    server.fallbackNotificationHandler = async (notification) => {
      if (notification.method !== 'notifications/initialized') return previous?.(notification);
      ensureSeeded();
      const p: Record<string, unknown> = isRecord(notification.params) ? notification.params : {};
      const preset = p[CONCERN_PRESET_KEY] ?? p.preset;
      if (p.concerns !== undefined || preset !== undefined) applyLenient('the initialized notification', p.concerns, preset);
      server.oninitialized?.();
    };
  }

  server.setRequestHandler('concerns/list', { params: LooseParams }, () => {
    const out: { concerns: ConcernDeclaration[]; presets?: ConcernPresets } = { concerns: [...declarations] };
    if (Object.keys(presets).length > 0) out.presets = presets;
    return out;
  });

  server.setRequestHandler('concerns/update', { params: LooseParams }, async (params) => {
    if (modern) throw modernUpdateRefusal(metaKey, Object.keys(presets).length > 0);
    ensureSeeded();
    const { concerns, preset } = params ?? {};
    if (concerns === undefined && preset === undefined) {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'concerns/update needs "concerns" (an object mapping concern names to values) or "preset"');
    }
    let next = session.preferences();
    let nextPreset = sessionPreset;
    if (preset !== undefined) {
      if (typeof preset !== 'string' || !Object.hasOwn(presets, preset)) throw unknownPreset(preset);
      next = { ...(presets[preset] ?? {}) };
      nextPreset = preset;
    }
    if (concerns !== undefined) {
      const check = validatePreferences(declarations, concerns);
      if (check.problems.length > 0) throw invalid('concerns/update', check.problems);
      next = applyPatch(next, check.preferences);
    }
    const before = session.preferences();
    const modeChanged = opts.toolListMode !== undefined && opts.toolListMode(sessionPreset) !== opts.toolListMode(nextPreset);
    sessionPreset = nextPreset;
    const changed = session.setAll(next) || modeChanged;
    if (changed) await notifyChanges(before, session.preferences(), modeChanged);
    return { concerns: session.preferences(), changed };
  });

  return gate;
}

/** The -32602 answer to `concerns/update` in the modern era, naming the `_meta` keys to use instead. */
function modernUpdateRefusal(metaKey: string, hasPresets: boolean): ProtocolError {
  const preset = hasPresets ? ` and/or _meta[${JSON.stringify(CONCERN_PRESET_META_KEY)}] = "<preset name>"` : '';
  return new ProtocolError(
    ProtocolErrorCode.InvalidParams,
    `concerns/update is not supported in protocol revision 2026-07-28, which keeps no session state: send your concern preferences in the _meta of each request instead: _meta[${JSON.stringify(metaKey)}] = { "<concern>": "<value>" }${preset}`,
    { metaKey, ...(hasPresets ? { presetMetaKey: CONCERN_PRESET_META_KEY } : {}) },
  );
}
