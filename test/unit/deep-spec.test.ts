/**
 * A hostile nesting depth never crashes the compiler: past 2500 JSON levels the document is refused
 * with one located error; below it the document is read (and its schema cut at 64 levels).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { compile } from '../../src/compile.js';

/** A spec whose request body nests `depth` object levels (written as text: JSON.stringify itself overflows on such depths). */
function deepProject(depth: number): string {
  let schema = '{"type":"string"}';
  for (let i = 0; i < depth; i++) schema = `{"type":"object","properties":{"a":${schema}}}`;
  const spec = `{"openapi":"3.0.3","info":{"title":"deep","version":"1"},"servers":[{"url":"https://api.example.com"}],"paths":{"/x":{"post":{"operationId":"x","requestBody":{"content":{"application/json":{"schema":${schema}}}},"responses":{"200":{"description":"ok"}}}}}}`;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'mcpgen-deep-'));
  writeFileSync(path.join(dir, 'openapi.json'), spec);
  writeFileSync(path.join(dir, 'mcpgen.yaml'), 'name: deep\nopenapi: ./openapi.json\n');
  return dir;
}

describe('deeply nested specs', () => {
  it('refuses a document nested 5000 schema levels with one located error, no crash', async () => {
    const res = await compile({ manifestPath: 'mcpgen.yaml', cwd: deepProject(5000), emit: false });
    const errors = res.diagnostics.items.filter((d) => d.severity === 'error');
    expect(errors.map((d) => d.code)).toEqual(['MCPGEN_SPEC_TOO_DEEP']);
    expect(errors[0]!.location.file).toBe('openapi.json');
    expect(errors[0]!.location.line).toBe(1);
    expect(errors[0]!.location.col).toBeGreaterThan(1000);
  });

  it('reads a document nested 1000 schema levels (the published schema is cut)', async () => {
    const res = await compile({ manifestPath: 'mcpgen.yaml', cwd: deepProject(1000), emit: false });
    expect(res.diagnostics.items.filter((d) => d.severity === 'error')).toEqual([]);
    expect(res.ir!.tools).toHaveLength(1);
  });
});
