#!/usr/bin/env -S node --max-semi-space-size=8
// --max-semi-space-size=8 (also in package.json's start script and the Dockerfile's command; test/system/start-flags.test.ts
// keeps them the same): V8's young generation stops growing at 8 MiB per semi-space. A gateway's calls in flight are
// short-lived objects held across an upstream wait; left at V8's default, the young generation grew to 120 MiB with
// 2,000 calls in flight and stayed there. Measured (bench/RESULTS.md, README: Benchmarks): peak RSS 335 → ~250 MiB
// with 2,000 in flight, for a few per cent more CPU per call at saturation. NODE_OPTIONS cannot override it (the
// command line wins); run `node --max-semi-space-size=N bin/interchange.js serve` to choose another size.
//
// Interchange runs on Node 24, which `npm ci` installs into node_modules (the `node` package). Started by another
// Node (the system's Node 20, say), this file hands itself to that one, with the same flag, and exits as it exits; when
// there is none it says so in one line. This part is plain JavaScript any Node since 12 can parse.
const major = Number(process.versions.node.split('.')[0]);
if (major !== 24) {
  const { existsSync } = await import('node:fs');
  const { spawn } = await import('node:child_process');
  const { fileURLToPath } = await import('node:url');
  const node24 = fileURLToPath(new URL('../node_modules/node/bin/node', import.meta.url));
  if (!existsSync(node24)) {
    console.error(
      `interchange: needs Node.js 24, and this is ${process.version}; run \`npm ci\` in ${fileURLToPath(new URL('..', import.meta.url))} (it installs Node 24 into node_modules), then run this again.`,
    );
    process.exit(1);
  }
  const child = spawn(node24, ['--max-semi-space-size=8', fileURLToPath(import.meta.url), ...process.argv.slice(2)], {
    stdio: 'inherit',
  });
  // A supervisor's signals go on to the service, which shuts down as it would have. Ctrl-C reaches both processes
  // from the terminal already: this one only waits for the service to end (a second SIGINT would cut its shutdown).
  for (const signal of ['SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  process.on('SIGINT', () => {});
  child.on('exit', (code, signal) => {
    if (signal === null) process.exit(code ?? 1);
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  });
} else {
  // The one JavaScript file: it turns on Node's module compile cache before the first TypeScript module loads. The
  // cache keeps each module's type-stripped text and V8 code; with it, starts after the first one never load the
  // type stripper (about 17 MiB of memory for the life of the process) and compile nothing twice. The cache lives in
  // node_modules/.cache/interchange unless NODE_COMPILE_CACHE names another place; NODE_DISABLE_COMPILE_CACHE=1 turns
  // it off. A cache that cannot be written is skipped, never an error (README: Footprint).
  const { enableCompileCache } = await import('node:module');
  enableCompileCache(process.env.NODE_COMPILE_CACHE || new URL('../node_modules/.cache/interchange', import.meta.url).pathname);
  const { runCli } = await import('../src/cli/main.ts');
  process.exitCode = await runCli(process.argv.slice(2));
}
