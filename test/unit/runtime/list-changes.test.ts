/**
 * Server-wide list changes (list-changes.ts) in one process: every legacy session and the listen
 * streams' bus get each change once; with a shared bus the change goes through it (and other
 * instances' changes arrive from it). The shared bus over Redis between processes is tested end to
 * end in test/e2e/scale-out.test.ts.
 */

import type { Server, ServerEvent } from '@modelcontextprotocol/server';
import { InMemoryServerEventBus } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { ListChanges } from '../../../templates/runtime/server/list-changes.js';

function session(sent: string[], name: string): Server {
  return {
    sendToolListChanged: () => Promise.resolve(void sent.push(`${name} tools`)),
    sendPromptListChanged: () => Promise.resolve(void sent.push(`${name} prompts`)),
    sendResourceListChanged: () => {
      throw new Error('Server does not support notifying about resources');
    },
  } as unknown as Server;
}

describe('list changes', () => {
  it('without a shared bus: each session once, and the streams bus once; a kind a session cannot send is skipped', () => {
    const changes = new ListChanges();
    const sent: string[] = [];
    const streams = new InMemoryServerEventBus();
    const events: ServerEvent[] = [];
    streams.subscribe((e) => events.push(e));
    changes.changed('tools'); // before install: nowhere to go, no error
    changes.install({ sessions: () => [session(sent, 'a'), session(sent, 'b')], streams });
    changes.changed('tools');
    changes.changed('prompts');
    changes.changed('resources');
    expect(sent).toEqual(['a tools', 'b tools', 'a prompts', 'b prompts']);
    expect(events).toEqual([{ kind: 'tools_list_changed' }, { kind: 'prompts_list_changed' }, { kind: 'resources_list_changed' }]);
  });

  it('with a shared bus: a change is published on it, and the bus’s list events (this instance’s or another’s) reach the sessions', () => {
    const changes = new ListChanges();
    const sent: string[] = [];
    const shared = new InMemoryServerEventBus();
    const onShared: ServerEvent[] = [];
    shared.subscribe((e) => onShared.push(e));
    changes.install({ sessions: () => [session(sent, 'a')], shared });
    changes.changed('tools');
    expect(onShared).toEqual([{ kind: 'tools_list_changed' }]);
    expect(sent).toEqual(['a tools']);
    // another instance's change arriving on the bus; a resource update is not a list change
    shared.publish({ kind: 'prompts_list_changed' });
    shared.publish({ kind: 'resource_updated', uri: 'x://1' });
    expect(sent).toEqual(['a tools', 'a prompts']);
  });
});
