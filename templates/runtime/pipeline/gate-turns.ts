/**
 * The turns of the reflection gate among the nested calls of one code-mode `execute` run
 * (dispatch.ts). The gate's round memory (reflection.ts: the gates satisfied, the one question
 * out to the client) and the run's `asked` slot are one per `execute` call, so its gated calls
 * take the gate one at a time, in the order the code made them: a call holds its turn from the
 * moment it is made until the gate has decided (the steps before the gate — audit, access,
 * limits, argument validation — run in that turn; none of them waits on another call).
 *
 * 2026-07-28: when a call's check asks the client (an input round), the run ends with that
 * question; every call still waiting for its turn, and every gated call made after, is `parked`:
 * not made, not audited, not counted, and made by the retry's run. On the retry the asked call
 * (made first again, as the code runs the same way) is answered first; the next one asks in a round
 * of its own. Legacy: the gate's questions are real requests inside the run, one at a time.
 *
 * The turns live beside the round state (a WeakMap keyed by its object, one per round), never in
 * it: nothing of them is sealed into the requestState.
 *
 * This file is copied verbatim into every generated project.
 */

/** What a call's wait for its turn gives: `go` (the call goes on to the gate), or `parked`. */
export type Turn = 'go' | 'parked';

type Waiter = { readonly go: (turn: Turn) => void };

/** The gate's turns of one round of one `execute` call. */
export class GateTurns {
  private busy = false;
  private asking = false;
  private readonly queue: Waiter[] = [];

  /** Waits for the call's turn (in the order of the calls to this); rejects when `signal` aborts first. */
  take(signal: AbortSignal): Promise<Turn> {
    if (this.asking) return Promise.resolve('parked');
    if (signal.aborted) return Promise.reject(signal.reason ?? new Error('The call was cancelled'));
    if (!this.busy) {
      this.busy = true;
      return Promise.resolve('go');
    }
    return new Promise<Turn>((resolve, reject) => {
      const waiter: Waiter = {
        go: (turn) => {
          signal.removeEventListener('abort', onAbort);
          resolve(turn);
        },
      };
      const onAbort = (): void => {
        const at = this.queue.indexOf(waiter);
        if (at !== -1) this.queue.splice(at, 1);
        reject(signal.reason ?? new Error('The call was cancelled'));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.queue.push(waiter);
    });
  }

  /** The call holding the turn is done with the gate; `asked`: it asks the client in an input round (every other call parks). */
  release(asked: boolean): void {
    this.busy = false;
    if (asked) {
      this.asking = true;
      for (const w of this.queue.splice(0)) w.go('parked');
      return;
    }
    const next = this.queue.shift();
    if (next === undefined) return;
    this.busy = true;
    next.go('go');
  }
}

const turns = new WeakMap<object, GateTurns>();

/** The turns of the round whose gate state is `state` (created on first use). */
export function gateTurnsOf(state: object): GateTurns {
  let t = turns.get(state);
  if (t === undefined) {
    t = new GateTurns();
    turns.set(state, t);
  }
  return t;
}
