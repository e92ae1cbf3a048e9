/**
 * One first call on a WSDL, in a process of its own so that its peak RSS is its own (bench/run.ts runs it):
 *   node bench/wsdl-first-call.ts interchange|node-soap WSDL_URL ENDPOINT_URL METHOD PARAMS_JSON
 * Prints {ms, rssBeforeMiB, peakRssMiB}: the time from the start of the load to the call's answer, the resident
 * memory once everything before the load was ready, and the process's peak (VmHWM). Each mode loads only its own
 * client's modules.
 * - interchange: the app on a temp SQLite file, the integration PUT (endpoint_url the WSDL, service_url the local
 *   endpoint), then the timed execute: fetch, parse and check the WSDL, call.
 * - node-soap: createClientAsync on the WSDL (endpoint overridden), then the timed call.
 */
import { readFileSync } from 'node:fs';
import { withSoapApp } from './soap-app.ts';

const [mode, wsdlUrl, endpoint, method, paramsJson] = process.argv.slice(2);
const params = JSON.parse(paramsJson ?? '{}');

function rssMiB(field: 'VmRSS' | 'VmHWM'): number {
  const line = readFileSync('/proc/self/status', 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${field}:`));
  return Number(line?.replace(/\D+/g, '') ?? 0) / 1024;
}

function interchange(): Promise<number> {
  return withSoapApp(wsdlUrl, endpoint, async (execute) => {
    before = rssMiB('VmRSS');
    const started = performance.now();
    await execute(JSON.stringify({ operation: 'send', method, params }));
    return performance.now() - started;
  });
}

async function nodeSoap(): Promise<number> {
  const { createClientAsync } = await import('soap');
  before = rssMiB('VmRSS');
  const started = performance.now();
  const client = await createClientAsync(wsdlUrl, { endpoint });
  await (client as unknown as Record<string, (a: object) => Promise<unknown>>)[`${method}Async`](params);
  return performance.now() - started;
}

let before = 0;
const ms = mode === 'interchange' ? await interchange() : await nodeSoap();
console.log(JSON.stringify({ ms, rssBeforeMiB: before, peakRssMiB: rssMiB('VmHWM') }));
process.exit(0);
