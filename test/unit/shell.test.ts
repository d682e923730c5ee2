/**
 * The one shell quoting of the command lines mcpgen prints: what `sh` reads back is the text.
 */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { sliceFlagsText } from '../../src/cli/init/slice.js';
import { shellQuote } from '../../src/core/shell.js';

describe('shellQuote', () => {
  it.each(['plain', 'api/mcpgen.yaml', "it's", 'two words', '$HOME', '`id`', '"quoted"', 'a\\b', '*', 'new\nline', ''])(
    '%j reads back as itself in sh',
    (text) => {
      expect(execFileSync('sh', ['-c', `printf '%s' ${shellQuote(text)}`], { encoding: 'utf8' })).toBe(text);
    },
  );

  it('leaves plainly safe words bare', () => {
    expect(shellQuote('examples/petstore/mcpgen.yaml')).toBe('examples/petstore/mcpgen.yaml');
  });

  it('quotes the flags of an init slice the same way (a tag with a space or a $ survives the shell)', () => {
    expect(sliceFlagsText({ tags: ['Pull Requests', '$x'], excludeTags: ["Bob's"], methods: ['get'] })).toBe(
      `--tag 'Pull Requests' --tag '$x' --exclude-tag 'Bob'\\''s' --method GET`,
    );
  });
});
