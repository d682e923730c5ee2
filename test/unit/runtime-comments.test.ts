/**
 * The runtime modules are copied into every user's project: their comments speak of the
 * generated server, never of mcpgen's internal documents (design notes, seeds, issue numbers),
 * which users do not have.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const DIRS = ['../../templates/runtime/', '../../templates/project/'];

/** Phrases that only make sense inside the mcpgen repository. */
const INTERNAL = [/\bseeds?\b(?! ?[=:(])/i, /\bDESIGN\b/, /\bissues? #?\d+/i, /\bOption [A-Z]\b/, /\bSTYLE\.md\b/, /§\s?\d+(?!\.\d)/];

describe('text shipped into generated projects', () => {
  for (const dir of DIRS) {
    const url = new URL(dir, import.meta.url);
    // every shipped file, in the runtime's folders too (their README.md files stay in mcpgen)
    for (const name of readdirSync(url, { recursive: true, encoding: 'utf8' })
      .filter((f) => /\.(ts|hbs)$/.test(f) && !f.endsWith('.test.ts'))
      .sort()) {
      it(`${dir.replace('../../', '')}${name} cites no internal document`, () => {
        const lines = readFileSync(new URL(name, url), 'utf8').split('\n');
        const hits = lines.flatMap((line, i) => (INTERNAL.some((re) => re.test(line.replace(/RFC \d+ §[\d.]+/g, ''))) ? [`${i + 1}: ${line.trim()}`] : []));
        expect(hits).toEqual([]);
      });
    }
  }
});
