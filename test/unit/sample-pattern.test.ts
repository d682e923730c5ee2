/** The contract tests' pattern sampler: a value the pattern accepts, or none. */
import { describe, expect, it } from 'vitest';
import { samplePattern } from '../contract/sample-pattern.js';

describe('samplePattern', () => {
  it.each([
    '^AC[0-9a-fA-F]{32}$',
    '^(SM|MM)[0-9a-fA-F]{32}$',
    '^[a-z][a-z0-9-]{0,30}[a-z0-9]$',
    '^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$',
    '^((xn--)?[a-zA-Z0-9]+(-[a-zA-Z0-9]+)*\\.)+[a-zA-Z]{2,}\\.?$',
    '^do:(dbaas|domain|droplet):.*',
    '^\\d+\\.\\d+\\.\\d+$',
    '^[^/]+/[^/]+$',
  ])('%s', (pattern) => {
    const s = samplePattern(pattern);
    expect(s).toBeTypeOf('string');
    expect(s).toMatch(new RegExp(pattern, 'u'));
  });

  it('prefers a non-empty value where the pattern allows one', () => {
    expect(samplePattern('^[A-Z_]*(,[A-Z_]+)*$')).not.toBe('');
  });

  it('gives up on what it cannot follow', () => {
    expect(samplePattern('^(?=a)b$')).toBeUndefined();
    expect(samplePattern('(')).toBeUndefined();
  });
});
