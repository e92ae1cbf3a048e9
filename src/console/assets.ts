import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { loadVendor } from './vendor.ts';

/** One file the console serves: its bytes and the Content-Type they are sent with. */
export interface Asset {
  body: Buffer;
  type: string;
}

const contentTypes: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.html': 'text/html; charset=utf-8',
};

/** The console's own files (src/console/static), by their path below it with `/` separators. */
function readStatic(dir: string): Map<string, Asset> {
  const files = new Map<string, Asset>();
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const type = contentTypes[extname(entry.name)];
    if (!type) continue;
    const path = join(entry.parentPath, entry.name);
    files.set(relative(dir, path).split(sep).join('/'), { body: readFileSync(path), type });
  }
  return files;
}

/**
 * Bare names some vendor module imports whose package has no ES module build, mapped to the console's own stand-in
 * (below /console/assets/<version>/).
 */
const shims = { nullthrows: 'lib/nullthrows.js' } as const;

export interface ConsoleBundle {
  /** A digest of every file served: it is part of each asset's URL, so assets can be cached for good. */
  version: string;
  files: Map<string, Asset>;
  vendor: Map<string, Asset>;
  /** The page every console route answers with (the client routes below /console). */
  indexHtml: string;
  /** The CSP `script-src` hash of the inline import map (an import map cannot be loaded from a file). */
  importMapHash: string;
}

/** Reads the console's files and builds its page; `staticDir` is src/console/static. */
export function loadConsole(staticDir: string): ConsoleBundle {
  const files = readStatic(staticDir);
  const { files: modules, imports } = loadVendor();
  const vendor = new Map<string, Asset>([...modules].map(([name, body]) => [name, { body, type: contentTypes['.mjs'] }]));
  const digest = createHash('sha256');
  for (const map of [files, vendor]) {
    for (const [name, asset] of [...map].sort(([a], [b]) => a.localeCompare(b))) digest.update(name).update(asset.body);
  }
  const version = digest.digest('hex').slice(0, 12);
  const assets = `/console/assets/${version}`;
  const importMap = JSON.stringify({
    imports: {
      ...Object.fromEntries(Object.entries(imports).map(([name, file]) => [name, `/console/vendor/${version}/${file}`])),
      ...Object.fromEntries(Object.entries(shims).map(([name, file]) => [name, `${assets}/${file}`])),
    },
  });
  const importMapHash = `'sha256-${createHash('sha256').update(importMap).digest('base64')}'`;
  const preloads = ['main.js', 'app.js', 'lib/api.js', 'lib/html.js']
    .filter((file) => files.has(file))
    .map((file) => `<link rel="modulepreload" href="${assets}/${file}">`);
  const indexHtml = [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<meta name="color-scheme" content="light">',
    '<title>Interchange console</title>',
    `<link rel="icon" href="${assets}/favicon.svg" type="image/svg+xml">`,
    `<link rel="stylesheet" href="${assets}/console.css">`,
    `<script type="importmap">${importMap}</script>`,
    ...preloads,
    `<script type="module" src="${assets}/main.js"></script>`,
    '</head>',
    '<body>',
    '<div id="app"><p class="boot">Loading the console…</p></div>',
    '<noscript><p class="boot">The Interchange console needs JavaScript.</p></noscript>',
    '</body>',
    '</html>',
    '',
  ].join('\n');
  return { version, files, vendor, indexHtml, importMapHash };
}
