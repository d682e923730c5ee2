import { afterEach, describe, expect, it, vi } from 'vitest';
import { getLogLevel, log, parseLogLevel, setLogLevel } from '../../../templates/runtime/core/log.js';

afterEach(() => {
  vi.restoreAllMocks();
  setLogLevel('info');
});

function capture(): { err: string[]; out: string[] } {
  const err: string[] = [];
  const out: string[] = [];
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    err.push(String(chunk));
    return true;
  });
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out.push(String(chunk));
    return true;
  });
  vi.spyOn(console, 'log');
  return { err, out };
}

describe('log', () => {
  it('writes exactly one line to stderr and nothing to stdout', () => {
    const { err, out } = capture();
    log('warn', 'multi\nline message', { a: 'x\ny', err: Object.assign(new Error('boom'), { code: 'ECONNREFUSED' }) });
    expect(out).toEqual([]);
    expect(console.log).not.toHaveBeenCalled();
    expect(err).toHaveLength(1);
    const line = err[0]!;
    expect(line.endsWith('\n')).toBe(true);
    expect(line.slice(0, -1)).not.toMatch(/[\n\r\u2028\u2029]/);
    expect(line).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z WARN multi\\nline message /);
    expect(line).toContain('{"a":"x\\ny","err":{"name":"Error","message":"boom","code":"ECONNREFUSED"}}');
  });

  it('respects the threshold', () => {
    const { err } = capture();
    log('debug', 'hidden');
    setLogLevel('debug');
    log('debug', 'shown');
    setLogLevel('error');
    log('warn', 'hidden too');
    expect(err).toHaveLength(1);
    expect(err[0]).toContain('DEBUG shown');
  });

  it('survives values JSON cannot render', () => {
    const { err } = capture();
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    log('error', 'odd', circular);
    log('error', 'big', 10n);
    expect(err).toHaveLength(2);
    expect(err[0]).toContain('ERROR odd [object Object]');
    expect(err[1]).toContain('ERROR big "10"');
  });

  it('parses level names', () => {
    expect(parseLogLevel(' DEBUG ')).toBe('debug');
    expect(parseLogLevel('verbose')).toBeUndefined();
    expect(parseLogLevel(undefined)).toBeUndefined();
    expect(getLogLevel()).toBe('info');
  });
});
