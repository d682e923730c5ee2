/**
 * Server-wide list changes: `notifyListChanged('tools' | 'prompts' | 'resources')` (handler code,
 * or code that learns the lists changed) tells the clients of this server that a list may have
 * changed, so they list it again: every legacy HTTP session gets `notifications/<kind>/list_changed`,
 * and every modern `subscriptions/listen` stream that asked for it (`toolsListChanged`, …) gets it
 * when the server declares `listChanged` for that kind. With `<PREFIX>_REDIS_URL` the change goes
 * through the shared bus (redis-bus.ts) and reaches the clients of every instance.
 *
 * (Per-session changes, such as a client's own `concerns/update`, stay with that session:
 * concern-protocol.ts sends them.) Over stdio a connection is not told of server-wide changes.
 *
 * This file is copied verbatim into every generated project.
 */
import type { Server, ServerEvent, ServerEventBus } from '@modelcontextprotocol/server';
import { log } from '../core/log.js';

/** A list that can change. */
export type ListKind = 'tools' | 'prompts' | 'resources';

const EVENTS = { tools: 'tools_list_changed', prompts: 'prompts_list_changed', resources: 'resources_list_changed' } as const;

/** The list kind of a bus event, if it is a list change. */
function kindOf(event: ServerEvent): ListKind | undefined {
  for (const kind of Object.keys(EVENTS) as ListKind[]) if (EVENTS[kind] === event.kind) return kind;
  return undefined;
}

/** Where a change goes (main.ts wires it when the server serves HTTP). */
export type ListChangeTargets = {
  /** The legacy sessions' server instances. */
  readonly sessions: () => Iterable<Server>;
  /** The bus of the modern listen streams (unless it is `shared`, or fed by it). */
  readonly streams?: ServerEventBus;
  /** The bus shared with the other instances: changes go through it, and its list events are delivered here. */
  readonly shared?: ServerEventBus;
};

/** The process's list changes. */
export class ListChanges {
  #targets: ListChangeTargets | undefined;

  /** Wires the targets; with a shared bus, changes of every instance arrive through it. Once. */
  install(targets: ListChangeTargets): void {
    if (this.#targets !== undefined) return;
    this.#targets = targets;
    targets.shared?.subscribe((event) => {
      const kind = kindOf(event);
      if (kind !== undefined) this.#sessions(kind);
    });
  }

  changed(kind: ListKind): void {
    const t = this.#targets;
    if (t === undefined) return;
    // the shared bus delivers to this instance's subscribers too (the listen streams subscribed to it, or fed by it)
    if (t.shared !== undefined) return t.shared.publish({ kind: EVENTS[kind] });
    t.streams?.publish({ kind: EVENTS[kind] });
    this.#sessions(kind);
  }

  #sessions(kind: ListKind): void {
    for (const server of this.#targets?.sessions() ?? []) {
      const send =
        kind === 'tools'
          ? () => server.sendToolListChanged()
          : kind === 'prompts'
            ? () => server.sendPromptListChanged()
            : () => server.sendResourceListChanged();
      try {
        void Promise.resolve(send()).catch((err: unknown) => log('debug', `list changes: ${kind} list_changed not sent to a session`, err));
      } catch (err) {
        // a server that does not declare the kind cannot send it
        log('debug', `list changes: ${kind} list_changed not sent to a session`, err);
      }
    }
  }
}

/** This process's list changes (main.ts installs the targets). */
export const listChanges = new ListChanges();

/** Tells the clients (of every instance, with `<PREFIX>_REDIS_URL`) that the `kind` list may have changed. */
export function notifyListChanged(kind: ListKind): void {
  listChanges.changed(kind);
}
