/// <reference types="node" />
/**
 * The source's static imports form no cycle. A 13-module cycle through the view registry was
 * broken once (views now import only `views/contract.ts`); this keeps any cycle from coming back.
 * Dynamic `import()` (lazy view chunks) is not an edge: it loads after the importer has run.
 * Also the folder rule of src/README.md for `models/`: its modules and their tests import only
 * `models/`, `table/`, `format.ts` and `tools.ts` (never `charts/`, `views/` or the DOM side).
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = dirname(fileURLToPath(import.meta.url));
const STATIC_IMPORT = /^\s*(?:import|export)\s[^'"]*?from\s+['"](\.{1,2}\/[^'"]+)['"]/gm;

function sourceFiles(dir: string, withTests = false): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path, withTests);
    return name.endsWith('.ts') && (withTests || !name.endsWith('.test.ts')) ? [path] : [];
  });
}

/** What `models/` may import, relative to `src/`: folders end with `/`. */
const MODELS_MAY_IMPORT = ['models/', 'table/', 'format.ts', 'tools.ts'];

/** Each import of a file under `models/` that leaves what the folder may import, as `file -> target`. */
export function modelRuleBreaks(graph: ReadonlyMap<string, readonly string[]>): string[] {
  const allowed = (target: string) => MODELS_MAY_IMPORT.some((p) => (p.endsWith('/') ? target.startsWith(p) : target === p));
  const breaks: string[] = [];
  for (const [file, targets] of graph) {
    const from = relative(SRC, file);
    if (!from.startsWith('models/')) continue;
    for (const target of targets.map((t) => relative(SRC, t))) {
      if (!allowed(target)) breaks.push(`${from} -> ${target}`);
    }
  }
  return breaks;
}

/** File → the source files it imports statically (relative imports only). */
export function importGraph(files: readonly string[]): Map<string, string[]> {
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const targets: string[] = [];
    for (const match of readFileSync(file, 'utf8').matchAll(STATIC_IMPORT)) {
      const base = resolve(dirname(file), match[1].replace(/\.js$/, ''));
      const target = [`${base}.ts`, join(base, 'index.ts')].find((candidate) => known.has(candidate));
      if (target) targets.push(target);
    }
    graph.set(file, targets);
  }
  return graph;
}

/** One cycle (as a path that returns to its start), or null. Iterative DFS with colours. */
export function findCycle(graph: ReadonlyMap<string, readonly string[]>): string[] | null {
  const state = new Map<string, 'open' | 'done'>();
  for (const start of graph.keys()) {
    if (state.has(start)) continue;
    const stack: { node: string; next: number }[] = [{ node: start, next: 0 }];
    state.set(start, 'open');
    while (stack.length) {
      const top = stack[stack.length - 1];
      const edges = graph.get(top.node) ?? [];
      if (top.next >= edges.length) {
        state.set(top.node, 'done');
        stack.pop();
        continue;
      }
      const target = edges[top.next++];
      if (state.get(target) === 'open') {
        const from = stack.findIndex((frame) => frame.node === target);
        return [...stack.slice(from).map((frame) => frame.node), target];
      }
      if (!state.has(target)) {
        state.set(target, 'open');
        stack.push({ node: target, next: 0 });
      }
    }
  }
  return null;
}

describe('import cycles', () => {
  it('finds a planted cycle', () => {
    const graph = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a']],
      ['d', ['a']],
    ]);
    expect(findCycle(graph)).toEqual(['a', 'b', 'c', 'a']);
    expect(findCycle(new Map([['a', ['b']], ['b', []]]))).toBeNull();
  });

  it('the source has none', () => {
    const graph = importGraph(sourceFiles(SRC));
    expect(graph.size).toBeGreaterThan(50);
    const cycle = findCycle(graph);
    expect(cycle?.map((file) => relative(SRC, file)) ?? null).toBeNull();
  });
});

describe('models/ imports', () => {
  it('sees a model importing a chart', () => {
    const graph = new Map([
      [join(SRC, 'models/a.ts'), [join(SRC, 'charts/options.ts'), join(SRC, 'models/b.ts'), join(SRC, 'format.ts')]],
      [join(SRC, 'views/v.ts'), [join(SRC, 'charts/options.ts')]],
    ]);
    expect(modelRuleBreaks(graph)).toEqual(['models/a.ts -> charts/options.ts']);
  });

  it('stay inside models/, table/, format.ts and tools.ts, tests included', () => {
    const graph = importGraph(sourceFiles(SRC, true));
    expect([...graph.keys()].filter((f) => relative(SRC, f).startsWith('models/')).length).toBeGreaterThan(30);
    expect(modelRuleBreaks(graph)).toEqual([]);
  });
});
