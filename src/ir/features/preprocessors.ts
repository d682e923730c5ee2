/**
 * Preprocessors of the manifest → IR, with the checks a schema cannot express: names
 * unique among preprocessors and distinct from every tool, `after` naming existing
 * preprocessors, and no cycle through `after` (each cycle reported once, with its path).
 */
import type { Diagnostics, Location } from '../../core/diagnostics.js';
import { suggest } from '../../core/suggest.js';
import type { ResolvedManifest } from '../../manifest/load.js';
import type { IrPreprocessor } from '../types.js';
import type { HandlerResolver } from './handlers.js';

/** Name of the prompt that returns the preprocessors' context followed by the input (runtime/preprocessors/preprocessors-protocol.ts). */
export const WITH_CONTEXT_PROMPT = 'with_context';

/** Timeout of a preprocessor that sets none (the runtime's default, runtime/preprocessors/preprocessors.ts). */
export const DEFAULT_PREPROCESSOR_TIMEOUT_MS = 10_000;

/**
 * The preprocessors in the order the server runs them: by `after`, ties in manifest order (the
 * rule of runtime/preprocessors/preprocessors.ts `orderPreprocessors`). Only for a graph without cycles (a
 * cycle is a build error); anything left over is appended in manifest order.
 */
export function runOrder(list: readonly IrPreprocessor[]): IrPreprocessor[] {
  const out: IrPreprocessor[] = [];
  const left = [...list];
  while (left.length > 0) {
    const i = left.findIndex((p) => p.after.every((a) => out.some((o) => o.name === a)));
    if (i < 0) return [...out, ...left];
    out.push(...left.splice(i, 1));
  }
  return out;
}

/** Inputs of {@link buildPreprocessors}. */
export type PreprocessorsInput = {
  manifest: Pick<ResolvedManifest, 'preprocessors'>;
  /** Final names of every tool (operation and extra). */
  toolNames: readonly string[];
  handlers: HandlerResolver;
  locateManifest: (pointer: string) => Location;
  diagnostics: Diagnostics;
};

/** Builds the preprocessors in manifest order; problems go to `diagnostics`. */
export function buildPreprocessors(input: PreprocessorsInput): IrPreprocessor[] {
  const { diagnostics, locateManifest } = input;
  const list = input.manifest.preprocessors ?? [];
  const file = locateManifest('').file;
  const tools = new Set(input.toolNames);
  const index = new Map<string, number>();
  list.forEach((p, i) => {
    const at = locateManifest(`/preprocessors/${i}/name`);
    const first = index.get(p.name);
    if (first !== undefined) {
      diagnostics.error(
        'MCPGEN_DUPLICATE_PRIMITIVE',
        `preprocessor name ${JSON.stringify(p.name)} is already used by entry ${first}`,
        'give each preprocessor a different name',
        at,
      );
      return;
    }
    index.set(p.name, i);
    if (tools.has(p.name)) {
      diagnostics.error(
        'MCPGEN_DUPLICATE_PRIMITIVE',
        `preprocessor name ${JSON.stringify(p.name)} is also the name of a tool`,
        'rename the preprocessor: tools/call refuses preprocessors by name, so the names must not be shared',
        at,
      );
    }
  });

  const names = [...index.keys()];
  const deps: number[][] = list.map(() => []);
  list.forEach((p, i) => {
    (p.after ?? []).forEach((a, k) => {
      const at = locateManifest(`/preprocessors/${i}/after/${k}`);
      const j = index.get(a);
      if (j === undefined) {
        const near = suggest(a, names);
        diagnostics.error(
          'MCPGEN_UNKNOWN_PREPROCESSOR',
          `preprocessor ${JSON.stringify(p.name)} runs after ${JSON.stringify(a)}, which is not a preprocessor`,
          near ? `did you mean "${near}"?` : names.length > 1 ? `preprocessors: ${names.join(', ')}` : 'remove the entry',
          at,
        );
      } else if (j === i) {
        diagnostics.error('MCPGEN_PREPROCESSOR_CYCLE', `preprocessor ${JSON.stringify(p.name)} is listed in its own \`after\``, 'remove it from the list', at);
      } else deps[i]!.push(j);
    });
  });
  for (const cycle of cycles(deps)) {
    const path = [...cycle, cycle[0]!].map((i) => JSON.stringify(list[i]!.name)).join(' after ');
    const [i, next] = [cycle[0]!, cycle[1 % cycle.length]!];
    const k = (list[i]!.after ?? []).indexOf(list[next]!.name);
    diagnostics.error(
      'MCPGEN_PREPROCESSOR_CYCLE',
      `preprocessors wait for each other in a cycle: ${path}`,
      'remove one `after` entry of the cycle',
      locateManifest(`/preprocessors/${i}/after/${k}`),
    );
  }

  return list.map((p, i) => {
    const at = `/preprocessors/${i}`;
    const out: IrPreprocessor = {
      kind: 'preprocessor',
      name: p.name,
      after: [...(p.after ?? [])],
      handler: input.handlers.ref(p.handler, `${at}/handler`),
      origin: { file, pointer: at },
    };
    if (p.title !== undefined) out.title = p.title;
    if (p.description !== undefined) out.description = p.description;
    if (p.timeoutMs !== undefined) out.timeoutMs = p.timeoutMs;
    if (p.onError !== undefined) out.onError = p.onError;
    return out;
  });
}

/**
 * The cycles of the graph `deps` (node ⇒ the nodes it runs after), each once, as nodes where
 * each one runs after the next (and the last after the first), starting at the smallest index. Found by depth-first search;
 * a node on several cycles yields the first one met.
 */
function cycles(deps: readonly number[][]): number[][] {
  const state = deps.map(() => 0); // 0 new, 1 on the stack, 2 done
  const stack: number[] = [];
  const found = new Map<string, number[]>();
  const visit = (n: number): void => {
    state[n] = 1;
    stack.push(n);
    for (const d of deps[n]!) {
      if (state[d] === 1) {
        const cycle = stack.slice(stack.indexOf(d));
        const start = cycle.indexOf(Math.min(...cycle));
        const rotated = [...cycle.slice(start), ...cycle.slice(0, start)];
        found.set(rotated.join(','), rotated);
      } else if (state[d] === 0) visit(d);
    }
    stack.pop();
    state[n] = 2;
  };
  deps.forEach((_d, n) => {
    if (state[n] === 0) visit(n);
  });
  return [...found.values()];
}
