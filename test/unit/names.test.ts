import { describe, expect, it } from 'vitest';
import { assignIdentifiers, assignToolNames, fitName, sanitizeToolName, shortHash } from '../../src/ir/tools/names.js';

const LEGAL = /^[A-Za-z0-9_.-]{1,128}$/;

describe('tool names', () => {
  it('sanitises to legal MCP characters without leading or trailing separators', () => {
    expect(sanitizeToolName('get /pets/{petId}')).toBe('get_pets_petId');
    expect(sanitizeToolName('repos/get-content')).toBe('repos_get-content');
    expect(sanitizeToolName('..weird!!')).toBe('weird');
    expect(sanitizeToolName('日本')).toBe('tool');
  });

  it('cuts long names to the limit with a hash of the full name', () => {
    const long = 'a'.repeat(100);
    const cut = fitName(long, 64, long);
    expect(cut).toHaveLength(64);
    expect(cut.endsWith('_' + shortHash(long))).toBe(true);
    expect(fitName('short', 64, 'short')).toBe('short');
    expect(fitName(long, 5, long)).toHaveLength(5);
  });

  it('keeps the first colliding name (by METHOD path) and suffixes the others deterministically', () => {
    const reqs = [
      { key: 'POST /b', derived: 'pets list' },
      { key: 'GET /a', derived: 'pets_list' },
    ];
    const { names, problems } = assignToolNames(reqs, 64);
    expect(problems).toEqual([]);
    expect(names[1]).toBe('pets_list');
    expect(names[0]).toBe(`pets_list_${shortHash('POST /b', 6)}`);
    // order of the requests does not change the outcome
    expect(assignToolNames([...reqs].reverse(), 64).names).toEqual([...names].reverse());
  });

  it('reports explicit names that collide or are too long', () => {
    const { problems } = assignToolNames(
      [
        { key: 'GET /a', derived: 'a', explicit: 'same' },
        { key: 'GET /b', derived: 'b', explicit: 'same' },
        { key: 'GET /c', derived: 'same' },
        { key: 'GET /d', derived: 'd', explicit: 'x'.repeat(20) },
      ],
      10,
    );
    expect(problems).toContainEqual({ kind: 'duplicate', keys: ['GET /a', 'GET /b'], name: 'same', explicit: true });
    expect(problems).toContainEqual({ kind: 'duplicate', keys: ['GET /a', 'GET /b', 'GET /c'], name: 'same', explicit: true });
    expect(problems).toContainEqual({ kind: 'too-long', key: 'GET /d', name: 'x'.repeat(20), max: 10 });
  });

  it('yields legal, unique names within the limit for many similar long operation ids', () => {
    const reqs = Array.from({ length: 300 }, (_, i) => ({ key: `GET /r/${i}`, derived: `reposListCommitStatusesForRefWithAVeryLongSuffix/${i % 7}` }));
    for (const max of [20, 64]) {
      const { names, problems } = assignToolNames(reqs, max);
      expect(problems).toEqual([]);
      expect(new Set(names).size).toBe(names.length);
      for (const n of names) {
        expect(n).toMatch(LEGAL);
        expect(n.length).toBeLessThanOrEqual(max);
      }
    }
  });
});

describe('TS identifiers', () => {
  it('derives distinct Args/Result/Tool identifiers even when tool names differ only in punctuation', () => {
    const ids = assignIdentifiers(['get-pet', 'get_pet', 'class', '1st']);
    expect(ids[0]).toEqual({ argsTypeName: 'GetPetArgs', constName: 'getPetTool', resultTypeName: 'GetPetResult' });
    expect(ids[1]).toEqual({ argsTypeName: 'GetPet2Args', constName: 'getPet2Tool', resultTypeName: 'GetPet2Result' });
    expect(ids[2]!.argsTypeName).toBe('ClassArgs');
    expect(ids[3]!.argsTypeName).toBe('_1stArgs');
  });
});
