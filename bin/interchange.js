#!/usr/bin/env -S node --max-semi-space-size=8
// --max-semi-space-size=8 (also in package.json's start script; test/start-flags.test.ts keeps them the same): V8's
// young generation stops growing at 8 MiB per semi-space. A gateway's calls in flight are short-lived objects held
// across an upstream wait; left at V8's default, the young generation grew to 120 MiB with 2,000 calls in flight and
// stayed there. Measured (bench/RESULTS.md, README: Benchmarks): peak RSS 335 → ~250 MiB with 2,000 in flight, for
// a few per cent more CPU per call at saturation. NODE_OPTIONS cannot override it (the command line wins); run
// `node --max-semi-space-size=N bin/interchange.js serve` to choose another size.
// The one JavaScript file: it turns on Node's module compile cache before the first TypeScript module loads. The
// cache keeps each module's type-stripped text and V8 code; with it, starts after the first one never load the
// type stripper (about 17 MiB of memory for the life of the process) and compile nothing twice. The cache lives in
// node_modules/.cache/interchange unless NODE_COMPILE_CACHE names another place; NODE_DISABLE_COMPILE_CACHE=1 turns
// it off. A cache that cannot be written is skipped, never an error (README: Footprint).
import { enableCompileCache } from 'node:module';

enableCompileCache(process.env.NODE_COMPILE_CACHE || new URL('../node_modules/.cache/interchange', import.meta.url).pathname);
const { runCli } = await import('../src/cli/main.ts');
process.exitCode = await runCli(process.argv.slice(2));
