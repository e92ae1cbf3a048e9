import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runCli } from '../../src/cli/main.ts';
import { ConfigError, type Env, loadConfig } from '../../src/config/config.ts';
import { errorCatalogue } from '../../src/core/errors.ts';
import { body, type Harness, harness } from '../support/harness.ts';

/**
 * docs/ is what the product promises. These tests hold it to the code where a test can see both: the error catalogue,
 * the settings src/config/config.ts reads (with their defaults and ranges), the routes of the OpenAPI document (with the scope
 * each one asks for), the CLI's commands and flags, and every `docs/…#section` that the code, the README and the docs
 * themselves point at.
 */

const root = resolve(import.meta.dirname, '../..');
const docsDir = join(root, 'docs');

interface Section {
  level: number;
  /** The heading as written, without its leading #s. */
  title: string;
  /** The anchor GitHub gives it. */
  anchor: string;
  /** The heading's text up to the next heading of the same or a higher level. */
  text: string;
}

/** GitHub's heading anchor: lower case, punctuation but `-` and `_` dropped, spaces as `-`. */
function slug(title: string): string {
  return title
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** The headings of a Markdown text (not those inside fenced code blocks), each with its section's text. */
function sectionsOf(markdown: string): Section[] {
  const lines = markdown.split('\n');
  const headings: Array<{ line: number; level: number; title: string }> = [];
  let fenced = false;
  for (const [index, line] of lines.entries()) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    const heading = fenced ? null : /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) headings.push({ line: index, level: heading[1].length, title: heading[2] });
  }
  const seen = new Map<string, number>();
  return headings.map((heading, i) => {
    const next = headings.slice(i + 1).find((h) => h.level <= heading.level);
    const base = slug(heading.title);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    return {
      level: heading.level,
      title: heading.title,
      anchor: count === 0 ? base : `${base}-${count}`,
      text: lines.slice(heading.line, next?.line ?? lines.length).join('\n'),
    };
  });
}

/** The cells of every table row in `text` (separator rows left out). */
function tableRows(text: string): string[][] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('|') && !/^\|[\s|:-]+\|$/.test(line))
    .map((line) =>
      line
        .slice(1, line.endsWith('|') ? -1 : undefined)
        .split('|')
        .map((cell) => cell.trim()),
    );
}

function doc(file: string): string {
  return readFileSync(join(docsDir, file), 'utf8');
}

/** The section of `file` whose heading is exactly `title`; fails the test when there is none. */
function section(file: string, title: string): Section {
  const found = sectionsOf(doc(file)).find((s) => s.title === title);
  assert.ok(found, `docs/${file} has no heading "${title}"`);
  return found;
}

const words = (n: number) => new RegExp(`(^|[^\\d])${n}([^\\d]|$)`);

describe('docs/errors.md', () => {
  const text = doc('errors.md');
  const summary = tableRows(text).filter((cells) => /^`[a-z_]+`$/.test(cells[0]) && /^\d{3}$/.test(cells[1]));

  test('every code of the catalogue has a section giving its HTTP status, and a row in the summary table', () => {
    for (const [code, [status]] of Object.entries(errorCatalogue)) {
      assert.match(section('errors.md', `\`${code}\``).text, new RegExp(`HTTP ${status}\\b`), `${code}: HTTP ${status}`);
      const row = summary.find((cells) => cells[0] === `\`${code}\``);
      assert.ok(row, `${code}: no row in the summary table`);
      assert.equal(row[1], String(status), `${code}: the summary table's status`);
    }
  });

  test('documents no code the catalogue does not have', () => {
    const documented = [
      ...summary.map((cells) => cells[0]),
      ...sectionsOf(text)
        .filter((s) => s.level === 3)
        .map((s) => s.title),
    ].map((code) => code.replaceAll('`', ''));
    for (const code of documented) assert.ok(Object.hasOwn(errorCatalogue, code), `docs/errors.md documents ${code}`);
  });
});

describe('docs/configuration.md', () => {
  /** Every variable loadConfig reads, found by handing it an environment that records what is asked of it. */
  const read = new Set<string>();
  loadConfig(
    new Proxy({} as Env, {
      get(_target, name) {
        if (typeof name === 'string') read.add(name);
        return undefined;
      },
    }),
  );
  const rows = tableRows(section('configuration.md', 'Settings').text).filter((cells) =>
    /^`[A-Za-z][A-Za-z0-9_]*`$/.test(cells[0]),
  );
  const documented = new Map(rows.map((cells) => [cells[0].replaceAll('`', ''), cells]));

  test('lists every variable src/config/config.ts reads, and no other, in the Settings table', () => {
    assert.ok(read.size > 20, `loadConfig read only ${[...read].join(', ')}`);
    assert.deepEqual([...documented.keys()].toSorted(), [...read].toSorted());
  });

  test('each default written as a value is the default loadConfig applies', () => {
    const defaults = loadConfig({});
    for (const [name, [, defaultCell]] of documented) {
      const literal = /^`([^`]*)`$/.exec(defaultCell);
      if (!literal) continue;
      assert.deepEqual(loadConfig({ [name]: literal[1] }), defaults, `${name}: the default ${literal[1]}`);
    }
  });

  test('each range and list of values is the one loadConfig enforces', () => {
    for (const [name, [, , values]] of documented) {
      let refusal = '';
      try {
        loadConfig({ [name]: 'not a value!' });
      } catch (error) {
        if (!(error instanceof ConfigError)) throw error;
        refusal = error.message;
      }
      const range = /from (\d+) to (\d+)/.exec(refusal);
      if (range) {
        for (const bound of [range[1], range[2]]) assert.match(values, words(Number(bound)), `${name}: ${refusal}`);
      }
      const oneOf = /must be one of (.*), got/.exec(refusal);
      if (oneOf) for (const value of oneOf[1].split(', ')) assert.ok(values.includes(`\`${value}\``), `${name}: ${value}`);
      if (/must be true or false/.test(refusal)) assert.ok(values.includes('`true`') && values.includes('`false`'), name);
    }
  });
});

describe('docs/api.md', () => {
  let h: Harness;
  /** `METHOD path` of every operation of the OpenAPI document, with its security requirement. */
  let operations: Array<{ method: string; path: string; tenant: boolean }>;
  const sections = () => sectionsOf(doc('api.md'));

  before(async () => {
    h = await harness();
    await h.tenant('acme');
    const res = await h.call(null, { method: 'GET', url: '/api/v1/openapi.json' });
    assert.equal(res.statusCode, 200);
    // biome-ignore lint/suspicious/noExplicitAny: the document is read by shape.
    const paths = body(res).paths as Record<string, Record<string, any>>;
    operations = Object.entries(paths).flatMap(([path, item]) =>
      Object.entries(item).map(([method, operation]) => ({
        method: method.toUpperCase(),
        path,
        tenant: JSON.stringify(operation.security ?? []).includes('ApiKey'),
      })),
    );
  });
  after(() => h.close());

  test('every operation of the OpenAPI document has a section headed `METHOD path`, and no other route does', () => {
    assert.ok(operations.length > 20, 'the OpenAPI document lists the operations');
    const titles = new Set(sections().map((s) => s.title));
    for (const { method, path } of operations) assert.ok(titles.has(`\`${method} ${path}\``), `${method} ${path}`);
    // Routes the document hides on purpose.
    const hidden = new Set(['`GET /api/v1/openapi.json`']);
    for (const title of titles) {
      if (!/^`[A-Z]+ \//.test(title) || hidden.has(title)) continue;
      assert.ok(
        operations.some(({ method, path }) => title === `\`${method} ${path}\``),
        `docs/api.md documents ${title}, which the app does not serve`,
      );
    }
  });

  test("each tenant endpoint's section names the scope the route asks for", async () => {
    // A key whose one scope no route asks for: every scoped route answers 403 naming the scope it wants.
    const auth = { key: (await h.key('acme', ['processflow.read'])).key, tenant: 'acme' };
    for (const { method, path } of operations.filter((o) => o.tenant)) {
      const res = await h.call(auth, { method: method as 'GET', url: path.replace(/\{[^}]+\}/g, 'x') });
      const scope = res.statusCode === 403 ? body(res).error.details.required_scope : 'any';
      // A body the route needs and was not given (the MCP endpoint's JSON-RPC message) is refused after auth and scope.
      const pastScope = res.statusCode < 300 || (res.statusCode === 400 && body(res).error.code === 'validation_failed');
      assert.ok(res.statusCode === 403 || pastScope, `${method} ${path}: ${res.statusCode} ${res.body}`);
      const text = sections().find((s) => s.title === `\`${method} ${path}\``)?.text ?? '';
      const named = scope === 'any' ? /Scope: any valid credential/.test(text) : text.includes(`Scope: \`${scope}\``);
      assert.ok(named, `${method} ${path}: docs/api.md should say "Scope: ${scope}"`);
    }
  });
});

describe('docs/cli.md', () => {
  /** What a CLI invocation prints on stdout. */
  async function printed(args: string[]): Promise<string> {
    const out: string[] = [];
    const stdin = (async function* () {})();
    const code = await runCli(args, { out: (text) => out.push(text), err: (text) => out.push(text), env: {}, stdin });
    assert.equal(code, 0, `interchange ${args.join(' ')}: ${out.join('\n')}`);
    return out.join('\n');
  }

  /** The commands a usage text lists (`keys create`, `serve`), each with the options of its line. */
  function commandsIn(usage: string): Map<string, string[]> {
    const commands = new Map<string, string[]>();
    for (const line of usage.split('\n')) {
      if (!/^ {2}\S/.test(line)) continue;
      // The synopsis is what comes before the description's run of spaces; its name, the words before any argument.
      const synopsis = line
        .trim()
        .split(/ {2,}/)[0]
        .replace(/^interchange /, '');
      const name: string[] = [];
      for (const word of synopsis.split(' ')) {
        if (!/^[a-z][a-z-]*$/.test(word)) break;
        name.push(word);
      }
      commands.set(name.join(' '), synopsis.match(/--[a-z][a-z-]*/g) ?? []);
    }
    return commands;
  }

  test('every command and group action has a section `interchange <command>` naming each of its options', async () => {
    const commands = commandsIn(await printed(['--help']));
    for (const group of new Set([...commands.keys()].filter((c) => c.includes(' ')).map((c) => c.split(' ')[0]))) {
      for (const [name, options] of commandsIn(await printed([group, '--help']))) commands.set(name, options);
    }
    assert.ok(commands.size >= 17, `the usage lists ${[...commands.keys()].join(', ')}`);
    for (const [name, listed] of commands) {
      // The command's own --help line, which may name more options than the overview has room for.
      const own = (await printed([...name.split(' '), '--help'])).split('\n')[0].match(/--[a-z][a-z-]*/g) ?? [];
      const text = section('cli.md', `\`interchange ${name}\``).text;
      for (const option of new Set([...listed, ...own])) assert.ok(text.includes(option), `${name}: ${option}`);
    }
  });

  test('--json, --help and --version are described', () => {
    const text = doc('cli.md');
    for (const option of ['--json', '--help', '--version']) assert.ok(text.includes(option), option);
  });
});

describe('links and citations', () => {
  const anchors = new Map<string, Set<string>>();
  /** The anchors of a Markdown file, read once. */
  function anchorsOf(file: string): Set<string> {
    let found = anchors.get(file);
    if (!found) {
      found = new Set(sectionsOf(readFileSync(file, 'utf8')).map((s) => s.anchor));
      anchors.set(file, found);
    }
    return found;
  }

  function filesUnder(dir: string, ext: RegExp): string[] {
    return readdirSync(dir, { recursive: true, encoding: 'utf8' })
      .map((name) => join(dir, name))
      .filter((path) => ext.test(path) && statSync(path).isFile());
  }

  /** Fails unless `target` (a path, with an optional `#anchor`) exists, relative to `from`'s folder. */
  function assertResolves(from: string, target: string): void {
    const [path, anchor] = target.split('#');
    const file = path === '' ? from : resolve(dirname(from), path);
    const where = `${relative(root, from)} → ${target}`;
    assert.ok(existsSync(file), `${where}: no such file`);
    if (anchor !== undefined) assert.ok(anchorsOf(file).has(anchor), `${where}: no such section`);
  }

  test('every relative link of docs/ and the README leads to a file and section that exist', () => {
    for (const file of [...filesUnder(docsDir, /\.md$/), join(root, 'README.md')]) {
      const text = readFileSync(file, 'utf8');
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target)) continue;
        assertResolves(file, target);
      }
    }
  });

  test('src/, test/ and the README cite docs/, not the requirements kept outside the repository', () => {
    // Spelt in pieces, so that this file does not cite them itself.
    const requirements = ['API', 'md'].join('.');
    const outside = ['..', 'shared'].join('/');
    const files = [
      ...filesUnder(join(root, 'src'), /\.(ts|js)$/),
      ...filesUnder(join(root, 'test'), /\.ts$/),
      join(root, 'README.md'),
    ];
    for (const file of files) {
      // Where the WSDL corpus lives is the one thing that stays outside (and its helper decides it).
      if (file.endsWith(join('test', 'support', 'wsdl-corpus.ts'))) continue;
      const lines = readFileSync(file, 'utf8').split('\n');
      for (const [index, line] of lines.entries()) {
        const where = `${relative(root, file)}:${index + 1}`;
        assert.ok(!line.includes(requirements), `${where} cites ${requirements}; cite a docs/ section instead`);
        const aboutCorpus = lines.slice(Math.max(0, index - 1), index + 2).some((near) => /corpus/i.test(near));
        assert.ok(!line.includes(outside) || aboutCorpus, `${where} points at ${outside}; cite a docs/ section instead`);
      }
    }
  });

  test('every docs/… citation in src/ and test/ names a file and section that exist', () => {
    for (const file of [...filesUnder(join(root, 'src'), /\.(ts|js)$/), ...filesUnder(join(root, 'test'), /\.ts$/)]) {
      const text = readFileSync(file, 'utf8');
      for (const [, target] of text.matchAll(/\bdocs\/([a-z-]+\.md(?:#[a-z0-9_-]+)?)/g)) {
        assertResolves(join(docsDir, 'README.md'), target);
      }
    }
  });
});
