import { describe, expect, it } from 'vitest';
import { ResourceChanges } from '../../../templates/runtime/primitives/subscriptions.js';

/** Resolves once `check` holds, polling every 5 ms (the test's timeout bounds it). */
const until = async (check: () => boolean): Promise<void> => {
  while (!check()) await new Promise((r) => setTimeout(r, 5));
};

describe('ResourceChanges (refreshMs polling)', () => {
  it('reads only while someone listens, notifies only a change of the content, and a failing read changes nothing', async () => {
    const changes = new ResourceChanges();
    let content = 'a';
    let reads = 0;
    let fail = false;
    const updated: string[] = [];
    changes.listen((uri) => updated.push(uri));
    changes.poll({
      uri: 'notes://x',
      name: 'x',
      refreshMs: 100,
      handler: () => {
        reads++;
        if (fail) throw new Error('down');
        return content;
      },
    });
    // nobody listens: no read
    await new Promise((r) => setTimeout(r, 150));
    expect(reads).toBe(0);
    const stop = changes.want('notes://x');
    await until(() => reads >= 2);
    expect(updated).toEqual([]);
    fail = true;
    const failedAt = reads;
    await until(() => reads >= failedAt + 1);
    fail = false;
    await until(() => reads >= failedAt + 2);
    // the same content after a failed read: still no change
    expect(updated).toEqual([]);
    content = 'b';
    await until(() => updated.length === 1);
    expect(updated).toEqual(['notes://x']);
    stop();
    const stoppedAt = reads;
    await new Promise((r) => setTimeout(r, 250));
    expect(reads).toBe(stoppedAt);
  });

  it('an open listen stream on the bus makes every polled resource poll', async () => {
    const changes = new ResourceChanges();
    let reads = 0;
    changes.poll({ uri: 'notes://y', name: 'y', refreshMs: 100, handler: () => String(++reads) });
    const events: unknown[] = [];
    const off = changes.bus.subscribe((e) => events.push(e));
    await until(() => events.length >= 1);
    expect(events[0]).toEqual({ kind: 'resource_updated', uri: 'notes://y' });
    off();
    const at = reads;
    await new Promise((r) => setTimeout(r, 250));
    expect(reads).toBe(at);
  });
});
