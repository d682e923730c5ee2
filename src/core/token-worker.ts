/**
 * The o200k tokenizer on a worker thread, answering synchronously: the main thread posts a text
 * and sleeps on a shared flag (Atomics.wait) until the worker has counted it. Started when a cold
 * build is about to read a spec that documents examples, the worker loads the tokenizer (~0.5 s on
 * GitHub: compiling its 2.4 MB rank table and building its maps) on the second core while the main
 * thread reads, checks and starts modelling the spec; the counts are the same tokenizer's, so the
 * same numbers. The calibration also posts its texts ahead ({@link TokenWorker.post}, in batches),
 * so the worker counts them while the main thread models, and collects the answers when it needs
 * them ({@link TokenWorker.collect}): one synchronous round trip per text cost a cold GitHub build
 * ~0.5 s of waiting. When the worker cannot answer (it failed to start or load, or took over 60 s),
 * the count falls back to the tokenizer on the main thread.
 */
import { createRequire } from 'node:module';
import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from 'node:worker_threads';

const require = createRequire(import.meta.url);

// CommonJS, run by the worker as given (no file of its own, so it runs from src/ under tests too)
const SOURCE = `
const { workerData } = require('node:worker_threads');
const { port, flag, ahead, tokenizer } = workerData;
let count;
try {
  count = require(tokenizer).countTokens;
} catch (e) {
  count = () => { throw e; };
}
port.on('message', (text) => {
  // a batch posted ahead ({ ahead: texts }) is answered by counting up 'ahead', any other by 'flag'
  const early = text !== null && typeof text === 'object' && !Array.isArray(text);
  const texts = early ? text.ahead : text;
  let reply;
  try {
    reply = { tokens: Array.isArray(texts) ? texts.map((t) => count(t)) : count(texts) };
  } catch (e) {
    reply = { error: String(e) };
  }
  port.postMessage(reply);
  const cell = early ? ahead : flag;
  if (early) Atomics.add(cell, 0, 1);
  else Atomics.store(cell, 0, 1);
  Atomics.notify(cell, 0);
});
`;

const WAIT_MS = 60_000;

/** A tokenizer on a worker thread; {@link TokenWorker.count} is synchronous. */
export class TokenWorker {
  readonly #worker: Worker;
  readonly #port: MessagePort;
  readonly #flag = new Int32Array(new SharedArrayBuffer(4));
  /** How many batches posted ahead the worker has answered. */
  readonly #ahead = new Int32Array(new SharedArrayBuffer(4));
  /** How many batches were posted ahead and not collected yet. */
  #posted = 0;
  #broken = false;

  constructor() {
    const { port1, port2 } = new MessageChannel();
    this.#port = port1;
    this.#worker = new Worker(SOURCE, {
      eval: true,
      workerData: { port: port2, flag: this.#flag, ahead: this.#ahead, tokenizer: require.resolve('gpt-tokenizer/cjs/encoding/o200k_base') },
      transferList: [port2],
    });
    this.#worker.unref();
    // an error of the worker itself shows as no answer: the count falls back
    this.#worker.on('error', () => undefined);
  }

  /** The o200k token count of `text`; `undefined` when the worker cannot answer (count it on this thread then). */
  count(text: string): number | undefined {
    if (this.#broken) return undefined;
    Atomics.store(this.#flag, 0, 0);
    this.#port.postMessage(text);
    if (Atomics.wait(this.#flag, 0, 0, WAIT_MS) === 'timed-out') {
      this.#broken = true;
      return undefined;
    }
    const reply = receiveMessageOnPort(this.#port)?.message as { tokens?: number; error?: string } | undefined;
    if (reply === undefined || typeof reply.tokens !== 'number') {
      this.#broken = true;
      return undefined;
    }
    return reply.tokens;
  }

  /**
   * Posts `texts` to be counted while this thread goes on; {@link collect} returns their counts.
   * Collect before any other count (their answers come first on the port).
   */
  post(texts: readonly string[]): void {
    if (this.#broken) return;
    this.#port.postMessage({ ahead: texts });
    this.#posted++;
  }

  /**
   * The counts of every batch {@link post}ed since the last collect, in posting order, once all are
   * answered; `undefined` when the worker cannot answer (then it answers nothing more).
   */
  collect(): number[][] | undefined {
    const posted = this.#posted;
    this.#posted = 0;
    if (this.#broken) return undefined;
    const out: number[][] = [];
    for (let i = 0; i < posted; i++) {
      const answered = Atomics.load(this.#ahead, 0);
      if (answered === 0 && Atomics.wait(this.#ahead, 0, 0, WAIT_MS) === 'timed-out') {
        this.#broken = true;
        return undefined;
      }
      Atomics.sub(this.#ahead, 0, 1);
      const reply = receiveMessageOnPort(this.#port)?.message as { tokens?: unknown } | undefined;
      if (reply === undefined || !Array.isArray(reply.tokens) || !reply.tokens.every((n) => typeof n === 'number')) {
        this.#broken = true;
        return undefined;
      }
      out.push(reply.tokens as number[]);
    }
    return out;
  }

  /** The o200k token counts of `texts` in one round trip; `undefined` when the worker cannot answer. */
  countAll(texts: readonly string[]): number[] | undefined {
    if (this.#broken) return undefined;
    Atomics.store(this.#flag, 0, 0);
    this.#port.postMessage(texts);
    if (Atomics.wait(this.#flag, 0, 0, WAIT_MS) === 'timed-out') {
      this.#broken = true;
      return undefined;
    }
    const reply = receiveMessageOnPort(this.#port)?.message as { tokens?: unknown; error?: string } | undefined;
    if (reply === undefined || !Array.isArray(reply.tokens) || reply.tokens.length !== texts.length || !reply.tokens.every((n) => typeof n === 'number')) {
      this.#broken = true;
      return undefined;
    }
    return reply.tokens as number[];
  }

  /** Stops the worker. */
  close(): void {
    this.#broken = true;
    this.#port.close();
    void this.#worker.terminate();
  }
}
