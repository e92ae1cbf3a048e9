/**
 * The baseline of bench/execute-path.ts: what any Node gateway pays for the execute path, with none of Interchange's
 * auth, storage, validation or limits. Fastify 5 and undici, as Interchange uses them:
 *   node bench/servers/passthrough.ts UPSTREAM_URL
 * POST /execute {query} → POST UPSTREAM_URL {query, variables: {}} on a keep-alive Agent → the answer parsed and
 * reshaped into Interchange's envelope. Listens on a free port of 127.0.0.1 and prints {"url": "…/execute"}.
 */
import Fastify from 'fastify';
import { Agent } from 'undici';
import { passthroughHandler } from './passthrough-handler.ts';

const upstreamUrl = process.argv[2];
if (!upstreamUrl) throw new Error('usage: node bench/servers/passthrough.ts UPSTREAM_URL');
const dispatcher = new Agent();
const app = Fastify({ logger: false });

app.post<{ Body: { query: string } }>('/execute', passthroughHandler(upstreamUrl, dispatcher));

const url = await app.listen({ host: '127.0.0.1', port: 0 });
console.log(JSON.stringify({ url: `${url}/execute` }));
