import { describe, expect, it } from 'vitest';
import type { OperationTool } from '../../../templates/runtime/core/types.js';
import { MAX_KEPT_BYTES, MAX_KEPT_TOTAL_BYTES, replayAcrossRounds, replayByName } from '../../../templates/runtime/pipeline/api-replay.js';

const op = (name: string, method: string): OperationTool =>
  ({ kind: 'operation', name, inputSchema: { type: 'object' }, http: { method, path: '/', params: [] } }) as OperationTool;
const post = op('createNote', 'POST');
const get = op('listNotes', 'GET');

/** A runner that counts its requests and answers `answer(n)`. */
function runner(answer: (n: number) => string = (n) => `ok ${n}`) {
  const sent: string[] = [];
  const run = async (tool: OperationTool, args: Record<string, unknown>) => {
    sent.push(`${tool.name} ${JSON.stringify(args)}`);
    return { result: { content: [{ type: 'text' as const, text: answer(sent.length) }] }, status: 200 };
  };
  return { sent, run };
}

/** One round: a fresh wrapper over the same state, as the pipeline builds per run of the handler. */
const round = (state: Record<string, unknown>, run: ReturnType<typeof runner>['run'], era: 'legacy' | 'modern' = 'modern') =>
  replayAcrossRounds({ era, state: JSON.parse(JSON.stringify(state)) as Record<string, unknown> }, run);

describe('replayAcrossRounds', () => {
  it('a later round gets the outcomes of the same calls in the same order without a request; concurrent calls keep their places', async () => {
    const { sent, run } = runner();
    const state: Record<string, unknown> = {};
    const first = replayAcrossRounds({ era: 'modern', state }, run);
    const [a, b] = await Promise.all([first(post, { text: 'x' }), first(get, {})]);
    expect(sent).toHaveLength(2);
    const again = round(state, run);
    expect(await again(post, { text: 'x' })).toEqual(a);
    expect(await again(get, {})).toEqual(b);
    expect(sent).toHaveLength(2);
    // a call past what was recorded is made
    await again(get, { page: 2 });
    expect(sent).toHaveLength(3);
  });

  it('a run that departs from the order makes its calls afresh from there', async () => {
    const { sent, run } = runner();
    const state: Record<string, unknown> = {};
    const first = replayAcrossRounds({ era: 'modern', state }, run);
    await first(post, { text: 'x' });
    await first(get, {});
    const again = replayAcrossRounds({ era: 'modern', state }, run);
    await again(post, { text: 'other' });
    await again(get, {});
    expect(sent).toEqual(['createNote {"text":"x"}', 'listNotes {}', 'createNote {"text":"other"}', 'listNotes {}']);
  });

  it('an outcome too large to keep: a GET is made again, a POST is not sent twice', async () => {
    const big = 'y'.repeat(MAX_KEPT_BYTES + 1);
    const { sent, run } = runner(() => big);
    const state: Record<string, unknown> = {};
    const first = replayAcrossRounds({ era: 'modern', state }, run);
    await first(post, { text: 'x' });
    await first(get, {});
    expect(JSON.stringify(state).length).toBeLessThan(1000);
    const again = round(state, run);
    const replayed = await again(post, { text: 'x' });
    expect(replayed.result.isError).toBe(true);
    expect(replayed.result.content[0]).toMatchObject({ text: expect.stringContaining('createNote was already called with these arguments') });
    await again(get, {});
    expect(sent).toEqual(['createNote {"text":"x"}', 'listNotes {}', 'listNotes {}']);
  });

  it('keeps outcomes up to a total: past it, a GET is made again and a POST is not sent twice', async () => {
    const chunk = 'z'.repeat(60 * 1024);
    const { sent, run } = runner(() => chunk);
    const state: Record<string, unknown> = {};
    const first = replayAcrossRounds({ era: 'modern', state }, run);
    for (let i = 0; i < 20; i++) await first(get, { page: i });
    await first(post, { text: 'x' });
    // the state that travels with the next round stays within the total (plus bookkeeping)
    expect(Buffer.byteLength(JSON.stringify(state))).toBeLessThan(MAX_KEPT_TOTAL_BYTES + 8 * 1024);
    expect(sent).toHaveLength(21);
    const again = round(state, run);
    for (let i = 0; i < 20; i++) await again(get, { page: i });
    // the first four (60 KiB each within 256 KiB) came from the state; the others were fetched again
    expect(sent).toHaveLength(21 + 16);
    const replayed = await again(post, { text: 'x' });
    expect(replayed.result.isError).toBe(true);
    expect(sent.filter((s) => s.startsWith('createNote'))).toHaveLength(1);
  });

  it('keeps nothing in the legacy era (one run per call)', async () => {
    const { run } = runner();
    const state: Record<string, unknown> = {};
    await replayAcrossRounds({ era: 'legacy', state }, run)(post, { text: 'x' });
    expect(state).toEqual({});
  });
});

describe('replayByName (code mode)', () => {
  it('keeps outcomes under its own key; an outcome that asks for input is not kept, so the next round makes that call again', async () => {
    const sent: string[] = [];
    let asks = true;
    const run = async (extra: { name: string }, args: Record<string, unknown>) => {
      sent.push(`${extra.name} ${JSON.stringify(args)}`);
      return extra.name === 'deletePet' && asks ? { input: { resultType: 'input_required' } } : { result: `${extra.name} done` };
    };
    const state: Record<string, unknown> = { api: { untouched: true } };
    const first = replayByName({ state }, run, (refused) => ({ refused }), 'codeApi');
    expect(await first('getPetById', 'GET', { name: 'getPetById' }, { petId: 1 })).toEqual({ result: 'getPetById done' });
    expect(await first('deletePet', 'DELETE', { name: 'deletePet' }, { petId: 1 })).toMatchObject({ input: {} });
    expect(state.api).toEqual({ untouched: true });
    expect(Object.keys(state.codeApi as object)).toEqual(['0']);
    // the retry: the GET is replayed, the gated DELETE is made (now answered)
    asks = false;
    const again = replayByName({ state: JSON.parse(JSON.stringify(state)) as Record<string, unknown> }, run, (refused) => ({ refused }), 'codeApi');
    expect(await again('getPetById', 'GET', { name: 'getPetById' }, { petId: 1 })).toEqual({ result: 'getPetById done' });
    expect(await again('deletePet', 'DELETE', { name: 'deletePet' }, { petId: 1 })).toEqual({ result: 'deletePet done' });
    expect(sent).toEqual(['getPetById {"petId":1}', 'deletePet {"petId":1}', 'deletePet {"petId":1}']);
  });

  it("an outcome that waited for another call's question (parked) is not kept: the next round makes that call", async () => {
    const sent: string[] = [];
    let parks = true;
    const run = async (extra: { name: string }) => {
      sent.push(extra.name);
      return parks ? { parked: true as const } : { result: `${extra.name} done` };
    };
    const state: Record<string, unknown> = {};
    expect(await replayByName({ state }, run, (refused) => ({ refused }), 'codeApi')('deletePet', 'DELETE', { name: 'deletePet' }, { petId: 2 })).toEqual({
      parked: true,
    });
    expect(state.codeApi).toBeUndefined();
    parks = false;
    const again = replayByName({ state }, run, (refused) => ({ refused }), 'codeApi');
    expect(await again('deletePet', 'DELETE', { name: 'deletePet' }, { petId: 2 })).toEqual({ result: 'deletePet done' });
    expect(sent).toEqual(['deletePet', 'deletePet']);
  });

  it('measures each outcome once (a running total), not every kept outcome again per call: n calls, n encodings', async () => {
    let encodings = 0;
    // an outcome that counts how often it is encoded as JSON
    const counted = (n: number) => ({ result: `r${n}`, toJSON: () => (encodings++, { result: `r${n}` }) });
    let n = 0;
    const run = async () => counted(n++);
    const state: Record<string, unknown> = {};
    const replay = replayByName({ state }, run, (refused) => ({ refused }), 'codeApi');
    for (let i = 0; i < 50; i++) await replay('listPets', 'GET', {}, { page: i });
    // each outcome encoded once when kept (the re-encoding of all kept outcomes per call made it 50 + 49·50/2 = 1,275)
    expect(encodings).toBe(50);
    expect(Object.keys(state.codeApi as object)).toHaveLength(50);
    // a new round measures what it finds kept once, then adds as it goes
    const sealed = JSON.parse(JSON.stringify(state)) as Record<string, unknown>;
    encodings = 0;
    const next = replayByName({ state: sealed }, run, (refused) => ({ refused }), 'codeApi');
    for (let i = 0; i < 50; i++) await next('listPets', 'GET', {}, { page: i });
    for (let i = 50; i < 60; i++) await next('listPets', 'GET', {}, { page: i });
    expect(encodings).toBe(10);
    expect(Object.keys(sealed.codeApi as object)).toHaveLength(60);
  });
});
