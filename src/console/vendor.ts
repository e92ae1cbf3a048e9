import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The vendor modules, by their path below /console/vendor/<version>/, and the import map's entries for them. */
export interface VendorModules {
  files: Map<string, Buffer>;
  /** Bare specifier → path below /console/vendor/<version>/. */
  imports: Record<string, string>;
}

/**
 * Packages whose ES module entry (the `import` condition, as Node resolves it) is one file importing only bare names:
 * each is served as one file named after the package (`@codemirror/state` → `codemirror-state.mjs`).
 */
const singleFiles = [
  'preact',
  'preact/hooks',
  'htm',
  // The GraphQL editor of try-it-out, loaded only there (static/lib/graphql-editor.js).
  '@codemirror/autocomplete',
  '@codemirror/commands',
  '@codemirror/language',
  '@codemirror/lint',
  '@codemirror/state',
  '@codemirror/streamparser',
  '@codemirror/view',
  '@lezer/common',
  '@lezer/highlight',
  '@lezer/lr',
  '@marijn/find-cluster-break',
  'cm6-graphql',
  'crelt',
  'style-mod',
  'vscode-languageserver-types',
  'w3c-keyname',
] as const;

/**
 * Packages published as a tree of ES modules: the files below `dir` reachable from `entry` by relative imports, served
 * under `<name>/`. graphql's `.mjs` build is one copy of graphql-js for the editor and the language service alike.
 */
const moduleTrees = [
  { name: 'graphql', dir: '.', entry: 'index.mjs' },
  { name: 'graphql-language-service', dir: 'esm', entry: 'index.js' },
] as const;

// Static imports and re-exports: `from './x'`, `import './x'`. The packages above have no dynamic relative import.
const relativeImport = /\b(from|import)(\s*)(['"])(\.\.?(?:\/[^'"\n]*)?)\3/g;
const moduleFile = /\.m?js$/;

const fileName = (specifier: string) => `${specifier.replace(/^@/, '').replaceAll('/', '-')}.mjs`;

function readSingleFile(specifier: string): Buffer {
  const path = fileURLToPath(import.meta.resolve(specifier));
  const body = readFileSync(path);
  if (body.toString('utf8').search(relativeImport) !== -1) {
    throw new Error(`The console's vendor module ${specifier} (${path}) imports relative files; serve it as a module tree.`);
  }
  return body;
}

/**
 * Where a relative import leads, as Node resolves one without an extension: the file itself, `.js`, `.mjs`, or the
 * folder's index. Only files of the tree count, so nothing outside it can be reached.
 */
function resolveWithin(tree: Set<string>, from: string, specifier: string): string | undefined {
  const target = posix.join(posix.dirname(from), specifier);
  if (target.startsWith('../')) return undefined;
  const candidates = [target, `${target}.js`, `${target}.mjs`, `${target}/index.js`, `${target}/index.mjs`];
  return candidates.find((candidate) => tree.has(candidate));
}

/**
 * Reads a module tree from `entry` on. Relative imports without an extension (graphql-language-service writes
 * `from './types'`, as for Node) are spelt out as the file they resolve to, so a browser fetches that file and each
 * module has one URL; nothing else in a file is changed.
 */
function readModuleTree(name: string, dir: string, entry: string): Map<string, Buffer> {
  const root = join(dirname(fileURLToPath(import.meta.resolve(`${name}/package.json`))), dir);
  const tree = new Set(
    readdirSync(root, { recursive: true, withFileTypes: true })
      .filter((file) => file.isFile() && moduleFile.test(file.name))
      .map((file) => relative(root, join(file.parentPath, file.name)).split(sep).join('/')),
  );
  const read = new Map<string, Buffer>();
  const queue: string[] = [entry];
  while (queue.length > 0) {
    const file = queue.pop() as string;
    if (read.has(file)) continue;
    const text = readFileSync(join(root, file), 'utf8').replace(relativeImport, (_match, keyword, space, quote, specifier) => {
      const target = resolveWithin(tree, file, specifier);
      if (!target) throw new Error(`The console's vendor module ${name}/${file} imports ${specifier}, not found in ${root}.`);
      queue.push(target);
      const path = posix.relative(posix.dirname(file), target);
      return `${keyword}${space}${quote}${path.startsWith('../') ? path : `./${path}`}${quote}`;
    });
    read.set(file, Buffer.from(text));
  }
  return read;
}

/**
 * The ES modules the console imports by bare name, read from node_modules once: the allowlisted single files and
 * module trees above, and nothing else (a request is a lookup in this map, never a path on disk).
 */
export function loadVendor(): VendorModules {
  const files = new Map<string, Buffer>();
  const imports: Record<string, string> = {};
  for (const specifier of singleFiles) {
    files.set(fileName(specifier), readSingleFile(specifier));
    imports[specifier] = fileName(specifier);
  }
  for (const { name, dir, entry } of moduleTrees) {
    for (const [file, body] of readModuleTree(name, dir, entry)) files.set(`${name}/${file}`, body);
    imports[name] = `${name}/${entry}`;
  }
  return { files, imports };
}
