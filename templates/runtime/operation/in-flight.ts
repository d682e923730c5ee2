/**
 * The memory that responses being read hold together. Every call keeps the body it reads (up to
 * the response limit) until its result is made; with many calls at once, against slow, huge or
 * compressed answers, those bodies add up. One budget per server bounds the sum: a call is
 * refused before its request is sent when the bodies already held leave no room for one more
 * response of the largest size, and a call whose body would push the sum over the limit while it
 * is read stops reading and is refused. Either way the result says so, and nothing else is held.
 */

/**
 * Results written but not yet sent: a transport whose peer reads slowly queues them in memory
 * (stdout to a client is a socket, and writes to it do not block).
 */
export type OutputBacklog = {
  /** Bytes queued for sending now. */
  bytes(): number;
  /** Resolves once the queue has been sent, or after a short while (at most about 100 ms) in any case. */
  drained(): Promise<void>;
};

/** A body this small is turned into a result at once when nothing else is queued (see {@link InFlightBudget.turn}). */
export const SMALL_BODY_BYTES = 16 * 1024;

/** The byte budget all calls of a server share. */
export class InFlightBudget {
  private heldBytes = 0;
  private tail: Promise<unknown> = Promise.resolve();
  /** Turns queued and not yet done. */
  private waiting = 0;

  /**
   * `limit` is the most bytes all calls together may hold, counting what `backlog` says is
   * still queued for sending.
   */
  constructor(
    readonly limit: number,
    private readonly backlog?: OutputBacklog,
  ) {}

  /** Bytes held now: bodies being read or turned into results, and results not yet sent. */
  get held(): number {
    return this.heldBytes + (this.backlog?.bytes() ?? 0);
  }

  /** Whether a response of `size` bytes would still fit next to what is held now. */
  fits(size: number): boolean {
    return this.held + size <= this.limit;
  }

  /** Takes `n` bytes when they fit, else takes nothing and returns false. */
  take(n: number): boolean {
    if (!this.fits(n)) return false;
    this.heldBytes += n;
    return true;
  }

  /** Gives back `n` bytes taken before. */
  give(n: number): void {
    this.heldBytes = Math.max(0, this.heldBytes - n);
  }

  /**
   * Runs `work` after every earlier one, each in an event-loop turn of its own, and not while
   * more than half the budget is queued for sending. Turning a large body into a result
   * (decoding, parsing, encoding) takes milliseconds: done back to back for many responses at
   * once, it would keep the server from reading its input, and even a `ping` would wait for all
   * of them. One at a time, the protocol is served in between; and results are made no faster
   * than the client reads them. `small` work (a body of at most {@link SMALL_BODY_BYTES}) runs
   * at once when no other turn is queued and the output queue is at most half the budget.
   */
  turn<T>(work: () => T, small = false): Promise<T> {
    // a small body's work takes microseconds: with no other turn waiting and room in the output
    // queue, it runs now (the wait for the next event-loop turn would only delay its answer)
    if (small && this.waiting === 0 && (this.backlog === undefined || this.backlog.bytes() <= this.limit / 2)) {
      try {
        return Promise.resolve(work());
      } catch (err) {
        return Promise.reject(err);
      }
    }
    this.waiting++;
    const run = this.tail.then(() => this.ready()).then(work);
    this.tail = run.then(
      () => void this.waiting--,
      () => void this.waiting--,
    );
    return run;
  }

  /** The next event-loop turn in which the output backlog is at most half the budget. */
  private async ready(): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    // bounded: 600 short waits; a client that reads nothing for a minute gets its results queued anyway
    for (let waited = 0; this.backlog !== undefined && this.backlog.bytes() > this.limit / 2 && waited < 600; waited++) await this.backlog.drained();
  }
}

/** One call's part of a budget: what it took, given back at once by {@link release}. */
export class InFlightShare {
  private taken = 0;

  /** A share of `budget`. */
  constructor(readonly budget: InFlightBudget) {}

  /** Takes `n` more bytes for this call; false when they would exceed the budget. */
  take(n: number): boolean {
    if (!this.budget.take(n)) return false;
    this.taken += n;
    return true;
  }

  /** Bytes this call holds now. */
  get bytes(): number {
    return this.taken;
  }

  /** Gives back everything this call took (idempotent). */
  release(): void {
    this.budget.give(this.taken);
    this.taken = 0;
  }
}

/** A response body that did not fit into the budget while it was read (the request had been sent). */
export class InFlightLimitError extends Error {
  /** Bytes held by all calls when the body was refused. */
  readonly held: number;
  /** Creates the error for a budget holding `held` bytes. */
  constructor(held: number) {
    super('the responses in flight would exceed the memory limit');
    this.name = 'InFlightLimitError';
    this.held = held;
  }
}
