import { describe, expect, it } from 'vitest';
import {
  DEFAULT_JUSTIFICATION_SCHEMA,
  embedJustificationSchema,
  extractJsonObject,
  judgeReply,
  justificationChecker,
  justificationRequest,
  SAMPLING_SYSTEM_PROMPT,
} from '../../../templates/runtime/reflection/reflection-sampling.js';

describe('extractJsonObject', () => {
  it('takes a fenced json block first', () => {
    expect(extractJsonObject('Here {not json}\n```json\n{"a": 1}\n```\nand {"b": 2}')).toEqual({ a: 1 });
    expect(extractJsonObject('```\n{"a": [1, {"b": "}"}]}\n```')).toEqual({ a: [1, { b: '}' }] });
  });

  it('otherwise the first balanced object that parses, braces in strings included', () => {
    expect(extractJsonObject('Sure: {"intent": "use {x} \\" }", "n": {"m": 1}} trailing')).toEqual({ intent: 'use {x} " }', n: { m: 1 } });
    expect(extractJsonObject('{oops} then {"ok": true}')).toEqual({ ok: true });
  });

  it('returns undefined without an object', () => {
    expect(extractJsonObject('no json here')).toBeUndefined();
    expect(extractJsonObject('[1, 2]')).toBeUndefined();
    expect(extractJsonObject('{"unterminated": 1')).toBeUndefined();
  });
});

describe('justification checking', () => {
  it('checks the default four-key schema with field-level messages', () => {
    const check = justificationChecker(DEFAULT_JUSTIFICATION_SCHEMA);
    expect(check({ intent: 'a', alternatives: [], choice: 'b', confidence: 0 })).toEqual([]);
    expect(check({ intent: 'a', alternatives: [], choice: 'b', confidence: -0.1 })).toEqual(['justification.confidence: must be >= 0']);
    expect(check(null)).toEqual(['justification: must be object']);
  });

  it('keeps local $refs working when the schema is embedded', () => {
    const schema = {
      $defs: { pct: { type: 'number', minimum: 0, maximum: 100 } },
      type: 'object',
      properties: { risk: { $ref: '#/$defs/pct' } },
      required: ['risk'],
    };
    const check = justificationChecker(schema);
    expect(check({ risk: 50 })).toEqual([]);
    expect(check({ risk: 500 })).toEqual(['justification.risk: must be <= 100']);
    const embedded = embedJustificationSchema(schema, { hash: { type: 'string' } }, ['hash']);
    expect(embedded).toMatchObject({
      required: ['hash', 'justification'],
      $defs: schema.$defs,
      properties: { justification: { properties: schema.properties } },
    });
  });
});

describe('justification requests and replies', () => {
  const check = justificationChecker(DEFAULT_JUSTIFICATION_SCHEMA);
  const GOOD = { intent: 'a', alternatives: [], choice: 'b', confidence: 0.5 };
  const reply = (text: string) => ({ role: 'assistant' as const, model: 'm', content: { type: 'text' as const, text } });

  it('builds the first request and the retry quoting the invalid reply', () => {
    const first = justificationRequest('Justify it.', { type: 'object' });
    expect(first).toEqual({
      messages: [
        { role: 'user', content: { type: 'text', text: 'Justify it.\n\nAnswer with only a JSON object that matches this JSON Schema:\n{"type":"object"}' } },
      ],
      systemPrompt: SAMPLING_SYSTEM_PROMPT,
      maxTokens: 800,
      includeContext: 'none',
    });
    const retry = justificationRequest(
      'Justify it.',
      { type: 'object' },
      { maxTokens: 99, previous: { text: 'nope', problems: ['justification: the reply contained no JSON object'] } },
    );
    expect(retry.maxTokens).toBe(99);
    expect(retry.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(retry.messages[1]?.content).toEqual({ type: 'text', text: 'nope' });
    expect(retry.messages[2]?.content).toMatchObject({ text: expect.stringContaining('- justification: the reply contained no JSON object') });
  });

  it('judges replies: valid, no JSON, invalid, no text', () => {
    expect(judgeReply(reply('```json\n' + JSON.stringify(GOOD) + '\n```'), check)).toEqual({ ok: true, justification: GOOD });
    expect(judgeReply(reply('no'), check)).toEqual({ ok: false, problems: ['justification: the reply contained no JSON object'], text: 'no' });
    expect(judgeReply(reply(JSON.stringify({ ...GOOD, confidence: 2 })), check)).toMatchObject({
      ok: false,
      problems: ['justification.confidence: must be <= 1'],
    });
    expect(judgeReply({ role: 'assistant', model: 'm', content: { type: 'image', data: '', mimeType: 'image/png' } }, check)).toEqual({
      ok: false,
      problems: ['justification: the reply contained no text'],
      text: '(image content)',
    });
    expect(judgeReply({ role: 'assistant', model: 'm', content: [{ type: 'text', text: JSON.stringify(GOOD) }] } as never, check)).toEqual({
      ok: true,
      justification: GOOD,
    });
  });
});
