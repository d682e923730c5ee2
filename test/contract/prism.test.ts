/**
 * Contract tests: the requests the generated servers send are accepted by Prism, a validating
 * OpenAPI mock, for every operation of Petstore 2.0 / 3.0 / 3.1 and Train Travel 3.1 with a
 * representative argument set. The oracle is Prism's own request validation, read from its
 * log: every request must reach Prism and pass ("The request passed the validation rules");
 * a violation (missing or mistyped parameter, bad body, missing credentials) fails the test.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { corpusSpec, specSlug } from '../helpers/corpus.js';
import { buildContractProject, connectClient, serverEnv, startPrism, stopPrisms } from '../helpers/prism.js';
import { ROOT } from '../helpers/project.js';
import { sampleArguments } from './sample.js';

const CASES = ['petstore-2.0.json', 'petstore-3.0.json', 'petstore-3.1.json', 'train-travel-3.1.yaml'];

afterAll(stopPrisms);

/** Prism's verdict on each request it received, in order, read from its log. */
function verdicts(log: string): Array<{ request: string; ok: boolean; detail: string }> {
  const plain = log.replace(/\u001b\[[0-9;]*m/g, '');
  return (
    plain
      // one segment per request: Prism opens each with an info line (usually "Request received";
      // for a binary multipart body the text after "info" is empty)
      .split(/(?=\[HTTP SERVER\] \S+ \S+ ℹ\s+info)/)
      .slice(1)
      .map((seg) => {
        const request = /\[HTTP SERVER\] (\S+ \S+)/.exec(seg)?.[1] ?? '?';
        const errors = seg.split('\n').filter((l) => /✖|Violation|did not pass/.test(l));
        return { request, ok: /passed the validation rules/.test(seg) && errors.length === 0, detail: errors.join('\n') };
      })
  );
}

/**
 * Swagger 2.0 operations with a body but no `consumes` (the operation's or the document's):
 * Prism's 2.0 import gives such a body no media type and rejects every request body ("No
 * supported content types"), whatever its Content-Type (checked by hand with curl), so it
 * cannot judge them; for those the test checks that this is Prism's only complaint.
 */
function prismBlindSpots(doc: Record<string, any>): Set<string> {
  const out = new Set<string>();
  if (doc.swagger !== '2.0') return out;
  for (const item of Object.values<Record<string, any>>(doc.paths ?? {}))
    for (const op of Object.values<any>(item))
      if (op?.operationId && !op.consumes && !doc.consumes && (op.parameters ?? []).some((p: any) => p.in === 'body')) out.add(op.operationId);
  return out;
}

describe('contract: requests accepted by Prism', () => {
  it.each(CASES)(
    '%s: every operation',
    async (file) => {
      const spec = corpusSpec(file);
      const slug = specSlug(file);
      const { ir, serverJs } = await buildContractProject(spec, path.join(ROOT, '.cache/contract', slug), `contract-${slug}`);
      const prism = await startPrism(spec);
      const { client } = await connectClient(serverJs, serverEnv(ir, prism.url));
      try {
        const { tools } = await client.listTools();
        expect(tools.length).toBe(ir.tools.length);
        const blind = prismBlindSpots(
          ir.tools.length ? (spec.endsWith('.json') ? JSON.parse(readFileSync(spec, 'utf8')) : parse(readFileSync(spec, 'utf8'))) : {},
        );
        const calls: Array<{ tool: string; args: unknown; text: string }> = [];
        const problems: string[] = [];
        for (const tool of tools) {
          const args = sampleArguments(tool.inputSchema as Record<string, unknown>);
          const res = await client.callTool({ name: tool.name, arguments: args });
          const text = (res.content as Array<{ type: string; text?: string }>).map((c) => c.text ?? `[${c.type}]`).join('\n');
          calls.push({ tool: tool.name, args, text });
          // the generated server itself refusing or failing to send is a failure too
          if (res.isError && /^(Invalid arguments|Request to|Missing)/.test(text)) problems.push(`${tool.name}: not sent: ${text.slice(0, 300)}`);
          if (/stoplight\.io\/prism\/errors#/.test(text) && !blind.has(ir.tools.find((t) => t.name === tool.name)?.operationId ?? ''))
            problems.push(`${tool.name}: Prism error: ${text.slice(0, 300)}`);
        }
        await new Promise((r) => setTimeout(r, 500)); // let Prism flush its log
        const seen = verdicts(prism.log());
        const sent = calls.filter((c) => !/^(Invalid arguments|Request to|Missing)/.test(c.text));
        expect(seen.length, prism.log().slice(-2000)).toBe(sent.length);
        sent.forEach((c, i) => {
          const v = seen[i]!;
          const opId = ir.tools.find((t) => t.name === c.tool)?.operationId ?? '';
          // the only complaint Prism may have about those is the media type it cannot know
          if (blind.has(opId)) expect(v.detail, `${c.tool} (Prism blind spot)`).toMatch(/No supported content types/);
          else if (!v.ok) problems.push(`${c.tool} ${JSON.stringify(c.args)} -> ${v.request}\n  ${v.detail}`);
        });
        expect(problems, problems.join('\n')).toEqual([]);
      } finally {
        await client.close();
        prism.stop();
      }
    },
    180_000,
  );
});
