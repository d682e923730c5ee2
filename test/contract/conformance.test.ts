/**
 * The official MCP conformance suites against the committed generated server of
 * examples/conformance, over Streamable HTTP, through scripts/conformance.mjs (Node 22 and the
 * suites are installed into .cache once). Two lines, one server, each suite run once:
 * - @modelcontextprotocol/conformance 0.1.16, active suite (legacy era), baseline
 *   examples/conformance/expected-failures.yml;
 * - 0.2.0-alpha.12 with `--requirements 2026-07-28` (the revision's required scenarios, plus the
 *   Tasks extension's and the pending ones it runs unscored), baseline expected-failures-2026.yml.
 * Each run must pass with its baseline: a scenario (or check) fails only if listed there with a
 * reason, none listed passes, and the scenarios every server must meet, and every fixture the
 * example implements, pass.
 *
 * The suite test is skipped, saying so, only while the generated server has no `--transport`
 * option (no HTTP transport); it turns on by itself once `--help` offers it.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import * as conformance from '../../scripts/conformance.mjs';
import { ROOT } from '../helpers/project.js';

type Scenario = { ok: boolean; passed: number; failed: number };
type Entry = { scenario: string; check?: string; entry: string; reason: string };
type Line = { name: 'legacy' | '2026'; version: string; baseline: string; args: string[] };
type SuiteResult = {
  line: string;
  code: number;
  output: string;
  totalLine?: string;
  passed?: number;
  failed?: number;
  scenarios: Record<string, Scenario>;
  expectedFailures: string[];
  unexpectedFailures: string[];
  stale: string[];
  unlisted: string[];
  passingListed: string[];
  listedUnjudged: string[];
  baseline: Entry[];
};
const c = conformance as {
  LINES: Record<'legacy' | '2026', Line>;
  readBaseline: (file: string) => Entry[];
  ensureConformance: (line: Line) => { node22: string; cli: string };
  buildServer: () => string;
  supportsHttp: (serverJs?: string) => boolean;
  runConformance: () => Promise<{ skipped?: string; results: Record<string, SuiteResult>; serverStderr: string }>;
  summaryText: (r: SuiteResult) => string;
  totalText: (r: SuiteResult) => string;
  linePassed: (r: SuiteResult) => boolean;
};

/**
 * Each line's summary line: every scenario's passed and failed checks, summed. Pinned, so that a
 * fixture that starts or stops passing shows here (and in the CI log, printed below).
 */
const EXPECTED_TOTAL = { legacy: 'Total: 40 passed, 0 failed', 2026: 'Total: 194 passed, 0 failed' } as const;

/** Scenarios that must pass: what any server must do, and the fixtures the example implements. */
const SHARED = [
  'tools-list',
  'dns-rebinding-protection',
  'server-sse-multiple-streams',
  'completion-complete',
  'tools-call-simple-text',
  'tools-call-image',
  'tools-call-audio',
  'tools-call-embedded-resource',
  'tools-call-mixed-content',
  'tools-call-error',
  'tools-call-with-progress',
  'resources-list',
  'resources-read-text',
  'resources-read-binary',
  'resources-templates-read',
  'prompts-list',
  'prompts-get-simple',
  'prompts-get-with-args',
  'prompts-get-embedded-resource',
  'prompts-get-with-image',
];
const MUST_PASS = {
  legacy: [
    ...SHARED,
    'server-initialize',
    'ping',
    'logging-set-level',
    'tools-call-with-logging',
    'resources-subscribe',
    'resources-unsubscribe',
    // handlers ask for input: real server→client requests
    'tools-call-sampling',
    'tools-call-elicitation',
    'elicitation-sep1034-defaults',
    'elicitation-sep1330-enums',
  ],
  2026: [
    ...SHARED,
    'sep-2164-resource-not-found',
    'caching',
    'json-schema-2020-12',
    'http-header-validation',
    'http-custom-header-server-validation',
    // test_missing_capability answers -32021 / HTTP 400 without the client's sampling
    'server-stateless',
    // handlers (and a registered prompt) ask for input: InputRequiredResult rounds
    'input-required-result-basic-elicitation',
    'input-required-result-basic-sampling',
    'input-required-result-basic-list-roots',
    'input-required-result-request-state',
    'input-required-result-multiple-input-requests',
    'input-required-result-multi-round',
    'input-required-result-missing-input-response',
    'input-required-result-ignore-extra-params',
    'input-required-result-non-tool-request',
    'input-required-result-result-type',
    'input-required-result-tampered-state',
    'input-required-result-capability-check',
    'input-required-result-unsupported-methods',
    'input-required-result-validate-input',
    // tasks (io.modelcontextprotocol/tasks): greet, slow_compute, failing_job, protocol_error_job, confirm_delete, multi_input, test_tool_with_task
    'tasks-lifecycle',
    'tasks-capability-negotiation',
    'tasks-wire-fields',
    'tasks-request-state-removal',
    'tasks-mrtr-input',
    'tasks-request-headers',
    'tasks-dispatch-and-envelope',
    'tasks-required-task-error',
    'tasks-mrtr-composition',
  ],
} as const;

const lines = [c.LINES.legacy, c.LINES[2026]];
const baselines = Object.fromEntries(lines.map((l) => [l.name, c.readBaseline(l.baseline)])) as Record<'legacy' | '2026', Entry[]>;
const serverJs = c.buildServer();
const http = c.supportsHttp(serverJs);
const SKIP_REASON = `skipped: ${path.relative(ROOT, serverJs)} --help offers no --transport option (the generated server has no Streamable HTTP transport yet)`;
if (!http) console.warn(`conformance suites ${SKIP_REASON}`);

// both suites run once, against one server, for the tests below
let run: ReturnType<typeof c.runConformance> | undefined;
const results = () => (run ??= c.runConformance());

describe('examples/conformance', () => {
  for (const line of lines) {
    it(`${line.version}: lists each expected failure once, with a reason (a spec clause, or "not built yet: <capability>"), and never a scenario it must pass`, () => {
      const entries = baselines[line.name];
      for (const e of entries) expect(e.reason, e.entry).toMatch(/^not built yet: \w+|\b(spec|MUST)\b/);
      const names = entries.map((e) => e.entry);
      expect(new Set(names).size).toBe(names.length);
      expect(entries.filter((e) => (MUST_PASS[line.name] as readonly string[]).includes(e.scenario)).map((e) => e.entry)).toEqual([]);
    });

    it(`${line.version}: lists only scenarios the pinned suite runs`, () => {
      const { node22, cli } = c.ensureConformance(line);
      const listed = execFileSync(node22, [cli, 'list', ...(line.name === '2026' ? line.args : ['--server'])], { encoding: 'utf8' });
      const known = [...listed.matchAll(/^\s+- ([a-z0-9-]+)(?: \[[^\]]*\])?$/gm)].map((m) => m[1]);
      expect(known.length).toBeGreaterThan(20);
      for (const n of [...baselines[line.name].map((e) => e.scenario), ...MUST_PASS[line.name]]) expect(known, n).toContain(n);
    }, 300_000);
  }

  it('commits the server mcpgen generates from the manifest', () => {
    // exit 1 listing each file that would change when the committed project has drifted
    execFileSync(process.execPath, [path.join(ROOT, 'bin/mcpgen.js'), 'build', 'examples/conformance/mcpgen.yaml', '--check'], { cwd: ROOT, encoding: 'utf8' });
  });

  for (const line of lines) {
    it.skipIf(!http)(
      `passes conformance ${line.version}${line.name === '2026' ? ' --requirements 2026-07-28' : ''} over Streamable HTTP${http ? '' : ` (${SKIP_REASON})`}`,
      async () => {
        const all = await results();
        expect(all.skipped).toBeUndefined();
        const result = all.results[line.name]!;
        // the summary and the Total line in the test output (CI logs)
        console.log(`${c.summaryText(result)}\n${c.totalText(result)}`);
        const context = `${c.summaryText(result)}\n--- server stderr ---\n${all.serverStderr}`;
        expect(result.totalLine, context).toBe(EXPECTED_TOTAL[line.name]);
        expect(result.unexpectedFailures, context).toEqual([]);
        expect(result.stale, context).toEqual([]);
        expect(result.unlisted, context).toEqual([]);
        expect(result.passingListed, context).toEqual([]);
        // every entry is used: judged by the suite, or a failing scenario it runs unscored
        expect([...result.expectedFailures, ...result.listedUnjudged].sort(), context).toEqual(result.baseline.map((e) => e.entry).sort());
        for (const name of MUST_PASS[line.name]) expect(result.scenarios[name], `${name}\n${context}`).toMatchObject({ ok: true, failed: 0 });
        for (const name of MUST_PASS[line.name]) expect(result.scenarios[name]!.passed, `${name}\n${context}`).toBeGreaterThan(0);
        // the Total line adds up
        const scenarios = Object.values(result.scenarios);
        expect(result.passed, context).toBe(scenarios.reduce((n, s) => n + s.passed, 0));
        expect(result.failed, context).toBe(scenarios.reduce((n, s) => n + s.failed, 0));
        expect(c.linePassed(result), context).toBe(true);
        expect(result.code, context).toBe(0);
      },
      600_000,
    );
  }
});
