#!/usr/bin/env node
// The one JavaScript file: it turns on Node's module compile cache before the first TypeScript module loads. The
// cache keeps each module's type-stripped text and V8 code; with it, starts after the first one never load the
// type stripper (about 17 MiB of memory for the life of the process) and compile nothing twice. The cache lives in
// node_modules/.cache/interchange unless NODE_COMPILE_CACHE names another place; NODE_DISABLE_COMPILE_CACHE=1 turns
// it off. A cache that cannot be written is skipped, never an error (README: Footprint).
import { enableCompileCache } from 'node:module';

enableCompileCache(process.env.NODE_COMPILE_CACHE || new URL('../node_modules/.cache/interchange', import.meta.url).pathname);
const { runCli } = await import('../src/cli/main.ts');
process.exitCode = await runCli(process.argv.slice(2));
