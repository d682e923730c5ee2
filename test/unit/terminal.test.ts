/**
 * The terminal decisions (colour, progress) as pure functions, the delayed spinner on a fake
 * TTY, and the "did you mean" for unknown options.
 */
import { describe, expect, it } from 'vitest';
import { suggestOptions } from '../../src/cli/main.js';
import { progressDelay, startProgress, useColor, useProgress } from '../../src/cli/terminal.js';

const tty = { isTTY: true };
const pipe = { isTTY: false };

describe('colour', () => {
  it('only on a TTY, never with NO_COLOR, FORCE_COLOR decides when set', () => {
    expect(useColor(tty, {})).toBe(true);
    expect(useColor(pipe, {})).toBe(false);
    expect(useColor({}, {})).toBe(false);
    expect(useColor(tty, { NO_COLOR: '1' })).toBe(false);
    expect(useColor(tty, { NO_COLOR: '' })).toBe(true); // no-color.org: only a non-empty value counts
    expect(useColor(tty, { NO_COLOR: '1', FORCE_COLOR: '1' })).toBe(false);
    expect(useColor(tty, { TERM: 'dumb' })).toBe(false);
    expect(useColor(tty, { FORCE_COLOR: '0' })).toBe(false);
    expect(useColor(pipe, { FORCE_COLOR: '1' })).toBe(true);
  });
});

describe('progress', () => {
  it('only on an interactive TTY and never with --quiet', () => {
    expect(useProgress(tty, {}, false)).toBe(true);
    expect(useProgress(tty, {}, true)).toBe(false);
    expect(useProgress(pipe, {}, false)).toBe(false);
    expect(useProgress({}, {}, false)).toBe(false);
    expect(useProgress(tty, { TERM: 'dumb' }, false)).toBe(false);
    expect(useProgress(tty, { CI: 'true' }, false)).toBe(false);
    expect(useProgress(tty, { CI: 'false' }, false)).toBe(true);
  });

  /** Enough of a TTY write stream for the spinner. */
  function fakeTty() {
    const writes: string[] = [];
    const stream = {
      isTTY: true,
      columns: 80,
      write: (s: string) => (writes.push(String(s)), true),
      cursorTo: () => true,
      moveCursor: () => true,
      clearLine: () => true,
      on: () => stream,
      off: () => stream,
      removeListener: () => stream,
    };
    return { stream: stream as unknown as NodeJS.WriteStream, writes };
  }

  it('shows nothing for work under the delay, and a spinner with the stage after it', async () => {
    const quick = fakeTty();
    const p1 = startProgress(quick.stream, 'Building mcpgen.yaml', 600_000);
    p1.stage('writing 12 files');
    p1.stop();
    await new Promise((r) => setTimeout(r, 50));
    expect(quick.writes.join('')).toBe('');

    const slow = fakeTty();
    const p2 = startProgress(slow.stream, 'Building mcpgen.yaml', 50);
    await new Promise((r) => setTimeout(r, 120));
    p2.stage('writing 12 files');
    const shown = slow.writes.join('');
    p2.stop();
    expect(shown).toContain('Building mcpgen.yaml: writing 12 files');
    expect(shown).toMatch(/\(\d+\.\d s\)/);
  });
});

describe('progress delay', () => {
  it('is 1 s unless MCPGEN_PROGRESS_DELAY_MS is a whole number of milliseconds', () => {
    expect(progressDelay({})).toBe(1000);
    expect(progressDelay({ MCPGEN_PROGRESS_DELAY_MS: '0' })).toBe(0);
    expect(progressDelay({ MCPGEN_PROGRESS_DELAY_MS: ' 250 ' })).toBe(250);
    for (const bad of ['', '-1', '1.5', 'soon', '1e3', '9999999999']) expect(progressDelay({ MCPGEN_PROGRESS_DELAY_MS: bad })).toBe(1000);
  });
});

describe('did you mean, for options', () => {
  it('suggests the closest option of the command for each unknown flag', () => {
    expect(suggestOptions('Unknown argument: frmat', ['build', 'x.yaml', '--frmat', 'json'])).toEqual(['Did you mean --format (not --frmat)?']);
    expect(suggestOptions('Unknown arguments: frmat, chek', ['build', 'x.yaml', '--frmat=json', '--chek'])).toEqual([
      'Did you mean --format (not --frmat)?',
      'Did you mean --check (not --chek)?',
    ]);
    // validate has no --check; init has --out only
    expect(suggestOptions('Unknown argument: chek', ['validate', 'x.yaml', '--chek'])).toEqual([]);
    expect(suggestOptions('Unknown argument: ot', ['init', 'x.yaml', '--ot', 'y'])).toEqual(['Did you mean --out (not --ot)?']);
    // a stray positional is not an option
    expect(suggestOptions('Unknown arguments: biuld, x.yaml', ['biuld', 'x.yaml'])).toEqual([]);
    expect(suggestOptions('Not enough arguments', ['build'])).toEqual([]);
  });
});
