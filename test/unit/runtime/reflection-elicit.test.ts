import { describe, expect, it } from 'vitest';
import { justificationForm, justificationMessage, splitList } from '../../../templates/runtime/reflection/reflection-elicit.js';
import { DEFAULT_JUSTIFICATION_SCHEMA } from '../../../templates/runtime/reflection/reflection-sampling.js';

describe('justificationForm', () => {
  it('the default schema: primitives as they are, the list of alternatives as one text field split back', () => {
    const f = justificationForm(DEFAULT_JUSTIFICATION_SCHEMA)!;
    expect(f.form).toEqual({
      type: 'object',
      properties: {
        intent: { type: 'string', minLength: 1, description: 'What the call is meant to achieve.' },
        alternatives: { type: 'string', description: 'Other options that were considered. (separate entries with ";")' },
        choice: { type: 'string', minLength: 1, description: 'The option chosen, and why.' },
        confidence: { type: 'number', minimum: 0, maximum: 1, description: 'Confidence in the choice, from 0 to 1.' },
      },
      required: ['intent', 'choice', 'confidence'],
    });
    expect(f.toJustification({ intent: 'i', alternatives: ' a ;b\n\nc; ', choice: 'c', confidence: 1 })).toEqual({
      intent: 'i',
      alternatives: ['a', 'b', 'c'],
      choice: 'c',
      confidence: 1,
    });
    expect(f.toJustification({ intent: 'i' })).toEqual({ intent: 'i', alternatives: [] });
  });

  it('enums and multi-selects stay; a schema with a property no form can hold has no form', () => {
    expect(
      justificationForm({
        type: 'object',
        properties: {
          risk: { type: 'string', enum: ['low', 'high'] },
          tags: { type: 'array', items: { type: 'string', enum: ['a', 'b'] } },
          ok: { type: 'boolean' },
        },
      })!.form,
    ).toEqual({
      type: 'object',
      properties: {
        risk: { type: 'string', enum: ['low', 'high'] },
        tags: { type: 'array', items: { type: 'string', enum: ['a', 'b'] } },
        ok: { type: 'boolean' },
      },
    });
    expect(justificationForm({ type: 'object', properties: { detail: { type: 'object' } } })).toBeUndefined();
    expect(justificationForm({ type: 'object', properties: { scores: { type: 'array', items: { type: 'number' } } } })).toBeUndefined();
    expect(justificationForm({ type: 'object' })).toBeUndefined();
  });

  it('the message names the tool and domain, the prompt, and the problems of a previous answer', () => {
    expect(justificationMessage('deletePet', 'pets', 'Why?')).toBe(
      'Before deletePet runs, it needs your justification (reflection gate, domain "pets").\n\nWhy?',
    );
    expect(justificationMessage('deletePet', 'pets', 'Why?', ['justification.intent: must not be empty'])).toMatch(
      /Why\?\n\nThe previous answer was not accepted:\n- justification\.intent: must not be empty$/,
    );
    expect(splitList('x')).toEqual(['x']);
  });
});
