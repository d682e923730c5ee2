/**
 * Code mode's signatures (src/ir/features/code-signatures.ts): one line of TypeScript per operation, from its
 * input and output schemas — exact for the usual shapes, summarised for deep, wide or long ones,
 * and always a valid declaration (TypeScript's parser finds no error).
 */
import { Project } from 'ts-morph';
import { describe, expect, it } from 'vitest';
import { codeSignature } from '../../src/ir/features/code-signatures.js';

const project = new Project({ useInMemoryFileSystem: true });
let n = 0;

/** Syntax errors (codes below 2000) of a signature as a declaration. */
function syntaxErrors(signature: string): string[] {
  const file = project.createSourceFile(`s${n++}.ts`, `declare function ${signature.replace(/^api\./, '')};`);
  return file
    .getPreEmitDiagnostics()
    .filter((d) => d.getCode() < 2000)
    .map((d) => String(d.getMessageText()));
}

const pet = { type: 'object', properties: { id: { type: 'integer' }, name: { type: 'string' }, tag: { type: ['string', 'null'] } }, required: ['name'] };

describe('codeSignature', () => {
  it('renders arguments (required first) and the result', () => {
    const input = {
      type: 'object',
      properties: { limit: { type: 'integer' }, owner: { type: 'string' }, state: { enum: ['open', 'closed'] }, 'X-Id': { type: 'string' } },
      required: ['owner'],
    };
    const output = { type: 'object', properties: { items: { type: ['array', 'null'], items: pet }, total: { type: 'integer' } } };
    const sig = codeSignature('pulls_list-reviews', input, output);
    expect(sig).toBe(
      'api.pulls_list_reviews(args: { owner: string; limit?: number; state?: "open" | "closed"; "X-Id"?: string }): Promise<{ items?: Array<{ name: string; id?: number; tag?: string | null }> | null; total?: number }>',
    );
    expect(syntaxErrors(sig)).toEqual([]);
  });

  it('a wrapped result ({status, data}) is typed as its data, which is what code receives', () => {
    const output = { type: 'object', properties: { status: { type: 'integer' }, data: { type: 'array', items: pet } } };
    expect(codeSignature('list', { type: 'object', properties: {} }, output, true)).toBe(
      'api.list(args?: {}): Promise<Array<{ name: string; id?: number; tag?: string | null }>>',
    );
    expect(codeSignature('empty', { type: 'object', properties: {} }, { type: 'object', properties: { status: { type: 'integer' } } }, true)).toBe(
      'api.empty(args?: {}): Promise<unknown>',
    );
  });

  it("leaves out the result keys compaction drops (results.omit), never the arguments'", () => {
    const output = {
      type: 'object',
      properties: { url: { type: 'string' }, html_url: { type: 'string' }, node_id: { type: 'string' }, number: { type: 'integer' } },
    };
    const input = { type: 'object', properties: { url: { type: 'string' } } };
    expect(codeSignature('x', input, output, false, ['*_url', 'url', 'node_id'])).toBe('api.x(args: { url?: string }): Promise<{ number?: number }>');
  });

  it('an operation without arguments or result schema', () => {
    expect(codeSignature('meta_root', { type: 'object', properties: {} }, undefined)).toBe('api.meta_root(args?: {}): Promise<unknown>');
  });

  it('follows $defs once (recursion becomes object), merges allOf, summarises wide objects and long enums', () => {
    const input = {
      type: 'object',
      properties: { node: { $ref: '#/$defs/Node' } },
      $defs: { Node: { type: 'object', properties: { child: { $ref: '#/$defs/Node' } } } },
    };
    const wide = { type: 'object', properties: Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`f${i}`, { type: 'string' }])) };
    const output = {
      allOf: [
        { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] },
        { type: 'object', properties: { big: { enum: Array.from({ length: 30 }, (_, i) => `v${i}`) }, wide } },
      ],
    };
    const sig = codeSignature('x', input, output);
    expect(sig).toContain('args: { node?: { child?: object } }');
    expect(sig).toContain('a: string; big?: string; wide?: { f0?: string;');
    expect(sig).toContain('/* +10 more */ [k: string]: unknown');
    expect(syntaxErrors(sig)).toEqual([]);
  });

  it('keeps hostile names and literals inside string literals', () => {
    const input = { type: 'object', properties: { 'a"; } declare const x: 1; //': { enum: ['*/ evil', "'q'"] } } };
    const sig = codeSignature('weird/op name', input, undefined);
    expect(sig.startsWith('api.weird_op_name(args: { "a\\"; } declare const x: 1; //"?: "*/ evil" | "\'q\'" })')).toBe(true);
    expect(syntaxErrors(sig)).toEqual([]);
  });

  it('falls back to Promise<unknown> past 1,500 characters', () => {
    const huge = {
      type: 'object',
      properties: Object.fromEntries(
        Array.from({ length: 12 }, (_, i) => [
          `field_with_a_long_name_${i}`,
          { type: 'object', properties: Object.fromEntries(Array.from({ length: 6 }, (_, j) => [`inner_field_with_a_long_name_${j}`, { type: 'string' }])) },
        ]),
      ),
    };
    const sig = codeSignature('big', { type: 'object', properties: {} }, huge);
    expect(sig).toBe('api.big(args?: {}): Promise<unknown>');
  });
});
