/**
 * The build cache's operation tools (src/ir/model-memo.ts, issue 24): after a manifest change that
 * does not reach them (description, prompts, resources) a build reuses the tools modelled before
 * and the entry is not written again; a change that reaches them (an override, a results setting,
 * the manifest's text moving under a located diagnostic) models them again. Either way the build
 * gives what a `--no-cache` build gives, to the byte, with the same `--format json` diagnostics.
 * A damaged entry is never used; `--no-cache` neither reads nor writes it.
 */
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { alterHeader, entryParts, writeSealed } from '../helpers/cache-entry.js';
import { mcpgen, snapshot } from '../helpers/cli.js';
import { ROOT } from '../helpers/project.js';

const temps: string[] = [];
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

// an argument rule that matches no argument: a warning located in the manifest, reported at the
// end of the model; and a prompt (whether a manifest has primitives besides the operations is in the key)
const RULE =
  'arguments:\n  - name: nosuch\n    description: Never matched.\nprompts:\n  - name: summarise\n    messages:\n      - role: user\n        text: Summarise the nodes.\n';

/** A copy of the multi-file fixture (a YAML spec that `$ref`s two other files), with {@link RULE}. */
function project(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'mcpgen-cache-model-'));
  temps.push(dir);
  cpSync(path.join(ROOT, 'test/fixtures/multi-file'), dir, { recursive: true });
  writeFileSync(path.join(dir, 'mcpgen.yaml'), readFileSync(path.join(dir, 'mcpgen.yaml'), 'utf8') + RULE);
  return dir;
}

const cacheOf = (dir: string) => path.join(dir, '.cache/mcpgen');
/** The operation tools' entry in the cache folder. */
function entryOf(dir: string): string {
  const entries = readdirSync(cacheOf(dir)).filter((f) => f.startsWith('operations-') && f.endsWith('.entry'));
  expect(entries).toHaveLength(1);
  return path.join(cacheOf(dir), entries[0]!);
}
const stamp = (file: string) => {
  const st = statSync(file);
  return [st.ino, st.mtimeMs];
};

/** The project as generated, the runtime's copies left out (the lock file lists their hashes). */
const generated = (dir: string) =>
  Object.fromEntries(Object.entries(snapshot(path.join(dir, 'server'))).filter(([f]) => !f.startsWith('src/runtime/') && f !== '.mcpgen.json'));

async function build(dir: string, ...args: string[]) {
  const res = await mcpgen(['build', 'mcpgen.yaml', '--format', 'json', ...args], dir);
  expect(res.code, res.stderr).toBe(0);
  return res;
}

/** `--format json` output without the counts of files written (a second build into the same folder writes none). */
const output = (stdout: string) => {
  const json = JSON.parse(stdout) as { summary: { files?: unknown } };
  delete json.summary.files;
  return json;
};

/** A cached build, then a `--no-cache` one of the same manifest: the same files and the same output. */
async function cachedEqualsCold(dir: string, what: string): Promise<string> {
  const cached = await build(dir);
  const files = generated(dir);
  const cold = await build(dir, '--no-cache');
  expect(files, what).toEqual(generated(dir));
  expect(output(cached.stdout), what).toEqual(output(cold.stdout));
  expect(cached.stdout, what).toMatch(/MCPGEN_ARGUMENT_RULE_UNMATCHED/);
  return cached.stdout;
}

const edit = (dir: string, change: (text: string) => string) => {
  const file = path.join(dir, 'mcpgen.yaml');
  writeFileSync(file, change(readFileSync(file, 'utf8')));
};

/** Rewrites the entry's header and body, sealed again: an entry the cache cannot tell from a real one. */
function doctor(entry: string, edit: (header: Record<string, unknown>, body: string) => string): void {
  const { header, body } = entryParts(entry);
  const edited = edit(header, body);
  writeSealed(entry, header, edited);
}

describe('build cache: the operation tools', () => {
  it('reuses them after a change that does not reach them, models them again after one that does; always the bytes of a cold build', async () => {
    const dir = project();
    await build(dir);
    const entry = entryOf(dir);
    let before = stamp(entry);
    const reused: Array<[string, (t: string) => string]> = [
      ['description', (t) => `${t}description: Nodes, from the cache.\n`],
      ['a prompt', (t) => t.replace('Summarise the nodes.', 'List the nodes.')],
      ['a resource', (t) => `${t}resources:\n  - uri: docs://nodes\n    name: nodes\n    text: About nodes.\n`],
    ];
    for (const [what, change] of reused) {
      edit(dir, change);
      await cachedEqualsCold(dir, what);
      expect(stamp(entry), `${what}: read, not written`).toEqual(before);
    }
    const remodelled: Array<[string, (t: string) => string, RegExp?]> = [
      ['an override', (t) => `${t}overrides:\n  getNode:\n    description: Overridden here.\n`, /Overridden here\./],
      ['a results setting', (t) => `${t}results:\n  maxTokens: 1234\n`, /1234/],
      // the rule's warning is located: the same settings one line further down are modelled again
      ['the manifest moved', (t) => `# a comment line\n${t}`],
    ];
    for (const [what, change, shows] of remodelled) {
      edit(dir, change);
      const out = await cachedEqualsCold(dir, what);
      if (shows) expect(Object.values(generated(dir)).join('\n'), what).toMatch(shows);
      if (what === 'the manifest moved') expect(JSON.parse(out).diagnostics[0].location.line).toBe(6);
      expect(stamp(entry), `${what}: written again`).not.toEqual(before);
      before = stamp(entry);
    }
  });

  it('models them again when only the order of keys in a setting changed: the tools copy some objects as written', async () => {
    const dir = project();
    const ordered = (a: string, b: string) => `overrides:\n  getNode:\n    annotations: { ${a}: true, ${b}: true }\n`;
    edit(dir, (t) => t + ordered('openWorldHint', 'idempotentHint'));
    await build(dir);
    const before = stamp(entryOf(dir));
    edit(dir, (t) => t.replace(ordered('openWorldHint', 'idempotentHint'), ordered('idempotentHint', 'openWorldHint')));
    await cachedEqualsCold(dir, 'key order');
    expect(Object.values(generated(dir)).join('\n')).toMatch(/"idempotentHint": true,\s*"openWorldHint": true/);
    expect(stamp(entryOf(dir)), 'written again').not.toEqual(before);
  });

  it('reads the spec when the tools come from the cache and a completion needs its parameters', async () => {
    const dir = project();
    // a query parameter with an enum, which a prompt argument completes from
    const node = path.join(dir, 'paths/node.yaml');
    writeFileSync(
      node,
      readFileSync(node, 'utf8').replace('  parameters:\n', '  parameters:\n    - { name: depth, in: query, schema: { type: string, enum: [one, all] } }\n'),
    );
    edit(dir, (t) =>
      t.replace(
        '        text: Summarise the nodes.\n',
        '        text: Summarise the nodes.\n    arguments:\n      - { name: depth, parameter: { operation: getNode, name: depth } }\n',
      ),
    );
    await build(dir);
    const before = stamp(entryOf(dir));
    edit(dir, (t) => `${t}description: Nodes, from the cache.\n`);
    await cachedEqualsCold(dir, 'completion');
    expect(stamp(entryOf(dir))).toEqual(before);
    expect(generated(dir)['src/prompts.gen.ts']).toMatch(/"one",\s*"all"|'one',\s*'all'/);
  });

  it('uses a whole entry as it is; --no-cache neither reads nor writes it', async () => {
    const dir = project();
    await build(dir);
    // whole, correctly hashed, but saying something else: shows whether the entry is read
    doctor(entryOf(dir), (_h, body) => body.replace('"name":"getNode"', '"name":"getNodeFromTheMemo"'));
    const doctored = readFileSync(entryOf(dir));
    const cached = await build(dir);
    expect(Object.values(generated(dir)).join('\n')).toMatch(/getNodeFromTheMemo/);
    expect(cached.stdout).toMatch(/MCPGEN_ARGUMENT_RULE_UNMATCHED/);
    await build(dir, '--no-cache');
    expect(Object.values(generated(dir)).join('\n')).not.toMatch(/getNodeFromTheMemo/);
    expect(readFileSync(entryOf(dir)).equals(doctored)).toBe(true);
  });

  it('detects a partial, corrupted, misshapen or foreign entry, models anew and rewrites it', async () => {
    const dir = project();
    await build(dir, '--no-cache');
    const cold = generated(dir);
    const coldOut = output((await build(dir, '--no-cache')).stdout);
    await build(dir);
    const whole = readFileSync(entryOf(dir));
    const nl = whole.indexOf(0x0a);
    const damaged: Array<[string, () => void]> = [
      ['cut short', () => writeFileSync(entryOf(dir), whole.subarray(0, Math.floor(whole.length * 0.6)))],
      ['header only', () => writeFileSync(entryOf(dir), whole.subarray(0, nl + 1))],
      ['empty', () => writeFileSync(entryOf(dir), Buffer.alloc(0))],
      // the body changed, its recorded hash not: a wrong hash
      ['changed body', () => writeFileSync(entryOf(dir), Buffer.from(whole.toString('utf8').replace('"name":"getNode"', '"name":"getNodX"')))],
      ['bad header', () => writeFileSync(entryOf(dir), Buffer.concat([Buffer.from('{"format":1,'), whole.subarray(nl)]))],
      // whole and hashed, but of the wrong shape, or another build's key
      ['tools not a list', () => doctor(entryOf(dir), (_h, body) => JSON.stringify({ ...JSON.parse(body), tools: 'getNode' }))],
      ['not an object', () => doctor(entryOf(dir), () => '[]')],
      ['a tool of another kind', () => doctor(entryOf(dir), (_h, body) => body.replace('"kind":"operation-tool"', '"kind":"extra-tool"'))],
      ['sharing that does not fit', () => doctor(entryOf(dir), (h, body) => ((h.shared = [[['tools', '9', 'x'], ['nowhere']]]), body))],
      ['another key', () => doctor(entryOf(dir), (h, body) => ((h.key = '0'.repeat(64)), body.replace('"name":"getNode"', '"name":"getNodX"')))],
      // the header altered (its seal not): still JSON of the right shape, but not what was written
      ['a warning made an error', () => writeFileSync(entryOf(dir), alterHeader(entryOf(dir), '"severity":"warning"', '"severity":"error"'))],
      ['a place moved', () => writeFileSync(entryOf(dir), alterHeader(entryOf(dir), /"line":5/g, '"line":4'))],
    ];
    for (const [what, damage] of damaged) {
      damage();
      const res = await build(dir);
      expect(generated(dir), what).toEqual(cold);
      expect(output(res.stdout), what).toEqual(coldOut);
      expect(readFileSync(entryOf(dir)).equals(whole), `${what}: rewritten whole`).toBe(true);
    }
  });
});
