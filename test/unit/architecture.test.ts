import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, test } from 'node:test';
import ts from 'typescript';

/**
 * The shape of src/ that docs/architecture.md draws: every import points down its layers, so no file of src/ and no
 * top-level folder of it (a file at the root of src/ counts as a folder of its own) imports, through any path, one
 * that imports it; and no file grows past 400 lines. Type imports count: a type is as much a dependency as a value.
 * What is allowed beyond that today is listed here, each with the work that removes it, and the lists only shrink:
 * an entry that no longer applies fails the test until it is taken off.
 */

const srcDir = resolve(import.meta.dirname, '../..', 'src');
const maxLines = 400;

/** Imports the cycle checks leave out, as `from -> to` (paths under src/; docs/architecture.md#what-is-allowed-today). */
const allowedImports = new Set<string>([]);

/** Files over 400 lines today, each to be split into files that say what their parts are. */
const allowedLargeFiles = new Set<string>([]);

/** One import: `from` imports `to`, both paths under src/. */
interface Import {
  from: string;
  to: string;
}

/** The TypeScript and JavaScript files of src/, as paths under it with `/` between segments. */
function sourceFiles(): string[] {
  return readdirSync(srcDir, { recursive: true, encoding: 'utf8' })
    .filter((name) => /\.(ts|js)$/.test(name) && statSync(join(srcDir, name)).isFile())
    .map((name) => name.split(sep).join('/'))
    .toSorted();
}

/**
 * What `file` imports of src/: static `import` and `export … from` (`import type` included) and `import()` of a
 * relative path. TypeScript's own pre-processor reads them, so an import shown in a comment or a string is none.
 */
function importsOf(file: string): Import[] {
  const text = readFileSync(join(srcDir, file), 'utf8');
  return ts
    .preProcessFile(text, true, true)
    .importedFiles.map((reference) => reference.fileName)
    .filter((specifier) => specifier.startsWith('./') || specifier.startsWith('../'))
    .map((specifier) =>
      relative(srcDir, resolve(srcDir, dirname(file), specifier))
        .split(sep)
        .join('/'),
    )
    .filter((to) => !to.startsWith('../'))
    .map((to) => ({ from: file, to }));
}

/** Where a file sits in the folder graph: its top-level folder (`auth/`), or itself when at the root (`app.ts`). */
function folderOf(file: string): string {
  const slash = file.indexOf('/');
  return slash === -1 ? file : file.slice(0, slash + 1);
}

/** A graph: for each node, the nodes it imports, each with the import that makes the edge (the first, by path). */
type Graph = Map<string, Map<string, Import>>;

function addEdge(graph: Graph, from: string, to: string, example: Import): void {
  if (from === to) return;
  const out = graph.get(from) ?? new Map<string, Import>();
  graph.set(from, out);
  if (!out.has(to)) out.set(to, example);
}

/** The nodes that reach each other, in groups of two or more: each group holds at least one cycle (Tarjan). */
function tangles(graph: Graph): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, counter);
    low.set(node, counter++);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node)?.keys() ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const group: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      group.push(member);
    } while (member !== node);
    if (group.length > 1) groups.push(group.toSorted());
  };
  for (const node of [...graph.keys()].toSorted()) if (!index.has(node)) visit(node);
  return groups;
}

/** One shortest cycle through `start` within `group`, as the nodes it passes, `start` first and last. */
function cycleThrough(graph: Graph, group: readonly string[], start: string): string[] {
  const inGroup = new Set(group);
  const cameFrom = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift()!;
    for (const next of [...(graph.get(node)?.keys() ?? [])].toSorted()) {
      if (!inGroup.has(next)) continue;
      if (next === start) {
        const path = [start];
        for (let at = node; at !== start; at = cameFrom.get(at)!) path.splice(1, 0, at);
        return [...path, start];
      }
      if (!cameFrom.has(next)) {
        cameFrom.set(next, node);
        queue.push(next);
      }
    }
  }
  return [start];
}

/** What a test names for each tangle: one cycle of it, and the import that makes each of its steps. */
function describeTangles(kind: string, graph: Graph): string[] {
  return tangles(graph).map((group) => {
    const cycle = cycleThrough(graph, group, group[0]);
    const steps = cycle.slice(1).map((to, i) => {
      const example = graph.get(cycle[i])!.get(to)!;
      return `    ${example.from} imports ${example.to}`;
    });
    const others = group.length > cycle.length - 1 ? ` (all of ${group.join(', ')} reach each other)` : '';
    return [`${kind} cycle: ${cycle.join(' → ')}${others}`, ...steps].join('\n');
  });
}

const files = sourceFiles();
const imports = files.flatMap(importsOf);
const checked = imports.filter(({ from, to }) => !allowedImports.has(`${from} -> ${to}`));

describe('architecture: imports point one way (docs/architecture.md)', () => {
  test('the imports of src/ are read: `import type` and `import()` among them', () => {
    const has = (from: string, to: string) => imports.some((i) => i.from === from && i.to === to);
    assert.ok(imports.length > 500, `only ${imports.length} imports read`);
    assert.ok(has('server.ts', 'app.ts'), 'a static import');
    assert.ok(has('app.ts', 'context.ts'), 'an `import type`');
    assert.ok(has('cli/serve.ts', 'server.ts'), 'an `import()`');
  });

  test('no file of src/ imports, through any path, a file that imports it', () => {
    const graph: Graph = new Map();
    for (const edge of checked) addEdge(graph, edge.from, edge.to, edge);
    const cycles = describeTangles('file', graph);
    assert.equal(cycles.length, 0, `\n${cycles.join('\n')}`);
  });

  test('no top-level folder of src/ imports, through any path, a folder that imports it (a root file is its own)', () => {
    const graph: Graph = new Map();
    for (const edge of checked) addEdge(graph, folderOf(edge.from), folderOf(edge.to), edge);
    const cycles = describeTangles('folder', graph);
    assert.equal(cycles.length, 0, `\n${cycles.join('\n')}`);
  });

  test('every allowed import is still made: one that has gone comes off the list', () => {
    const made = new Set(imports.map(({ from, to }) => `${from} -> ${to}`));
    const gone = [...allowedImports].filter((edge) => !made.has(edge));
    assert.deepEqual(gone, [], 'allowed imports no longer made; take them off allowedImports');
  });
});

describe('architecture: files stay small', () => {
  const lengths = new Map(
    files.map((file) => {
      const text = readFileSync(join(srcDir, file), 'utf8');
      return [file, text.split('\n').length - (text.endsWith('\n') ? 1 : 0)];
    }),
  );

  test(`no file of src/ is over ${maxLines} lines, but those listed to be split`, () => {
    const large = [...lengths]
      .filter(([file, lines]) => lines > maxLines && !allowedLargeFiles.has(file))
      .map(([file, lines]) => `${file}: ${lines} lines`);
    assert.deepEqual(large, [], `split these into files of at most ${maxLines} lines`);
  });

  test('every file listed to be split is still over the limit: one that has been split comes off the list', () => {
    const done = [...allowedLargeFiles].filter((file) => (lengths.get(file) ?? 0) <= maxLines);
    assert.deepEqual(done, [], 'take these off allowedLargeFiles');
  });
});
