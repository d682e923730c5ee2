/**
 * Token counts remembered in the build cache (src/core/token-memo.ts): a whole entry answers without
 * the tokenizer; a partial, corrupted or other-tokenizer entry is not read (the counts are the
 * tokenizer's again); the entry saved holds what the build used. The tokenizer worker counts as
 * the tokenizer does, one text or a batch of them in one round trip.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { o200k } from '../../src/core/lazy.js';
import { countAhead, countO200k, countO200kAll, heldAhead, readTokenMemo, saveTokenMemo, useTokenMemo } from '../../src/core/token-memo.js';
import { TokenWorker } from '../../src/core/token-worker.js';

const temps: string[] = [];
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});
const sha256 = (s: string | Buffer) => createHash('sha256').update(s).digest('hex');
const TEXTS = ['{"id":1,"name":"Rex"}', '{"login":"octocat","html_url":"https://github.com/octocat"}'];

/** Counts `TEXTS` with a memo read from `dir`, saves it, and returns the counts and whether it wrote. */
async function countWith(dir: string): Promise<{ counts: number[]; wrote: boolean }> {
  const memo = await readTokenMemo(dir);
  const counts = await useTokenMemo(memo, async () => TEXTS.map(countO200k));
  return { counts, wrote: await saveTokenMemo(dir, memo) };
}

describe('token memo', () => {
  it('answers from a whole entry, and never from a damaged one', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'mcpgen-tokens-'));
    temps.push(dir);
    const real = TEXTS.map((t) => o200k().countTokens(t));
    expect(await countWith(dir)).toEqual({ counts: real, wrote: true });
    // nothing new: nothing written
    expect(await countWith(dir)).toEqual({ counts: real, wrote: false });
    const file = path.join(dir, 'tokens.entry');
    const whole = readFileSync(file, 'utf8');
    const nl = whole.indexOf('\n');
    const header = JSON.parse(whole.slice(0, nl)) as Record<string, unknown>;
    // an entry whose body and hash agree is believed: the count comes from it, not the tokenizer
    const doctored = whole.slice(nl + 1).replace(`"${sha256(TEXTS[0]!)}":${real[0]}`, `"${sha256(TEXTS[0]!)}":999`);
    expect(doctored).not.toBe(whole.slice(nl + 1));
    writeFileSync(file, `${JSON.stringify({ ...header, bodyBytes: Buffer.byteLength(doctored), bodySha256: sha256(doctored) })}\n${doctored}`);
    expect((await countWith(dir)).counts).toEqual([999, real[1]]);
    // damaged entries: the tokenizer counts again, and the entry is written whole
    const damaged = [
      whole.slice(0, Math.floor(whole.length / 2)),
      `${JSON.stringify(header)}\n${doctored}`,
      `${JSON.stringify({ ...header, tokenizer: 'o200k 0.0.0', bodyBytes: Buffer.byteLength(doctored), bodySha256: sha256(doctored) })}\n${doctored}`,
      '',
    ];
    for (const bytes of damaged) {
      writeFileSync(file, bytes);
      expect(await countWith(dir)).toEqual({ counts: real, wrote: true });
      expect(readFileSync(file, 'utf8')).toBe(whole);
    }
  });

  it('counts with the tokenizer when no memo is active', () => {
    expect(TEXTS.map(countO200k)).toEqual(TEXTS.map((t) => o200k().countTokens(t)));
  });
});

describe('token worker', () => {
  it('counts on a worker thread what the tokenizer counts here, synchronously', async () => {
    const texts = [...TEXTS, '', 'ünïcödé ✓ 𝔘 — '.repeat(50), JSON.stringify({ a: Array.from({ length: 300 }, (_, i) => i) })];
    const worker = new TokenWorker();
    try {
      expect(texts.map((t) => worker.count(t))).toEqual(texts.map((t) => o200k().countTokens(t)));
      // through the memo's counting, as a build counts
      const counted = await useTokenMemo(undefined, async () => texts.map(countO200k), worker);
      expect(counted).toEqual(texts.map((t) => o200k().countTokens(t)));
    } finally {
      worker.close();
    }
    // a closed worker does not answer: the count falls back to this thread at once
    expect(worker.count(TEXTS[0]!)).toBeUndefined();
    expect(await useTokenMemo(undefined, async () => countO200k(TEXTS[0]!), worker)).toBe(o200k().countTokens(TEXTS[0]!));
  });
});

describe('batched counts', () => {
  const texts = [...TEXTS, '', TEXTS[0]!, 'ünïcödé ✓ 𝔘 — '.repeat(50)];
  const expected = texts.map((t) => o200k().countTokens(t));

  it('the worker counts a batch as the tokenizer counts each text, and a closed one falls back', async () => {
    const worker = new TokenWorker();
    try {
      expect(worker.countAll(texts)).toEqual(expected);
      expect(await useTokenMemo(undefined, async () => countO200kAll(texts), worker)).toEqual(expected);
    } finally {
      worker.close();
    }
    expect(worker.countAll(texts)).toBeUndefined();
    expect(await useTokenMemo(undefined, async () => countO200kAll(texts), worker)).toEqual(expected);
  });

  it('with a memo: remembered texts answer from it, the rest are counted and remembered', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'mcpgen-token-batch-'));
    temps.push(dir);
    expect((await countWith(dir)).wrote).toBe(true); // remembers TEXTS
    const memo = await readTokenMemo(dir);
    expect(memo.known.size).toBe(TEXTS.length);
    const counted = await useTokenMemo(memo, async () => countO200kAll(texts));
    expect(counted).toEqual(expected);
    expect(memo.changed).toBe(true);
    expect([...memo.used.keys()].sort()).toEqual([...new Set(texts.map((t) => sha256(t)))].sort());
    // all remembered now: nothing new counted
    const again = await readTokenMemo(dir);
    await useTokenMemo(again, async () => countO200kAll(TEXTS));
    expect(again.changed).toBe(false);
  });
});

describe('counting ahead', () => {
  const texts = [...TEXTS, 'ünïcödé ✓ 𝔘 — '.repeat(50), JSON.stringify({ a: Array.from({ length: 300 }, (_, i) => i) })];
  const expected = texts.map((t) => o200k().countTokens(t));

  it('the worker answers batches posted ahead, in order, when collected', () => {
    const worker = new TokenWorker();
    try {
      worker.post(texts.slice(0, 2));
      worker.post(texts.slice(2));
      expect(worker.collect()).toEqual([expected.slice(0, 2), expected.slice(2)]);
      expect(worker.collect()).toEqual([]);
      // a count after a collect is its own answer
      expect(worker.count(texts[0]!)).toBe(expected[0]);
    } finally {
      worker.close();
    }
    worker.post(texts);
    expect(worker.collect()).toBeUndefined();
  });

  it("counts posted ahead (small batches gathered, large ones sent) give the tokenizer's counts", async () => {
    const worker = new TokenWorker();
    const big = Array.from({ length: 40 }, (_, i) => JSON.stringify({ i, text: 'x'.repeat(2000 + i) }));
    try {
      const counted = await useTokenMemo(
        undefined,
        async () => {
          countAhead(texts);
          countAhead(big); // over the gathering size: posted at once
          return [...countO200kAll(big), ...texts.map(countO200k), countO200k('not counted ahead')];
        },
        worker,
      );
      expect(counted).toEqual([...big, ...texts, 'not counted ahead'].map((t) => o200k().countTokens(t)));
    } finally {
      worker.close();
    }
    // without a worker, counting ahead does nothing and counts are the tokenizer's
    countAhead(texts);
    expect(texts.map(countO200k)).toEqual(expected);
  });

  it('lets each count made ahead go when it is read; a text read again, or twice in a batch, counts the same', async () => {
    const worker = new TokenWorker();
    const many = Array.from({ length: 30 }, (_, i) => JSON.stringify({ i, text: 'y'.repeat(3000 + i) }));
    try {
      const seen = await useTokenMemo(
        undefined,
        async () => {
          countAhead(many);
          const first = countO200k(many[0]!); // collects every batch posted
          const held = heldAhead();
          const batch = countO200kAll([many[1]!, many[2]!, many[1]!, ...many.slice(3)]);
          const afterBatch = heldAhead();
          return { first, held, batch, afterBatch, again: countO200k(many[0]!) };
        },
        worker,
      );
      const real = many.map((t) => o200k().countTokens(t));
      expect(seen.held).toBe(many.length - 1);
      expect(seen.afterBatch).toBe(0);
      expect(seen.first).toBe(real[0]);
      expect(seen.again).toBe(real[0]);
      expect(seen.batch).toEqual([real[1], real[2], real[1], ...real.slice(3)]);
    } finally {
      worker.close();
    }
  });
});
