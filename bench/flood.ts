/**
 * A burst of requests from a process of its own, for bench/event-loop.ts (so that the prober's latencies are not the
 * load generator's own event loop):
 *   node bench/flood.ts URL --body TEXT [--header name:value]… [--calls 8] [--rounds 3]
 * Sends `calls` POSTs at once, `rounds` times over (each round once the last has been answered), and prints one JSON
 * line: the answers counted by status.
 */
import { parseArgs } from 'node:util';
import { Agent, request } from 'undici';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    header: { type: 'string', multiple: true, default: [] },
    body: { type: 'string', default: '' },
    calls: { type: 'string', default: '8' },
    rounds: { type: 'string', default: '3' },
  },
});
const headers = Object.fromEntries(values.header.map((h) => [h.slice(0, h.indexOf(':')), h.slice(h.indexOf(':') + 1).trim()]));
// One connection per call in flight, none kept waiting: the burst arrives at the server as a burst.
const dispatcher = new Agent({ connections: null, pipelining: 1 });
const statuses: Record<number, number> = {};
for (let round = 0; round < Number(values.rounds); round++) {
  await Promise.all(
    Array.from({ length: Number(values.calls) }, async () => {
      const res = await request(positionals[0], { dispatcher, method: 'POST', headers, body: values.body });
      await res.body.dump({ limit: Number.POSITIVE_INFINITY });
      statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
    }),
  );
}
await dispatcher.close();
console.log(JSON.stringify(statuses));
