/**
 * The baseline of bench/execute-path.ts: what any Node gateway pays for the execute path, with none of Interchange's
 * auth, storage, validation or limits. Fastify 5 and undici, as Interchange uses them:
 *   node bench/servers/passthrough.ts UPSTREAM_URL
 * POST /execute {query} → POST UPSTREAM_URL {query, variables: {}} on a keep-alive Agent → the answer parsed and
 * reshaped into Interchange's envelope. Listens on a free port of 127.0.0.1 and prints {"url": "…/execute"}.
 */
import Fastify from 'fastify';
import { Agent, request } from 'undici';

const upstreamUrl = process.argv[2];
if (!upstreamUrl) throw new Error('usage: node bench/servers/passthrough.ts UPSTREAM_URL');
const dispatcher = new Agent();
const app = Fastify({ logger: false });

app.post<{ Body: { query: string } }>('/execute', async (req, reply) => {
  const answer = await request(upstreamUrl, {
    method: 'POST',
    dispatcher,
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ query: req.body.query, variables: {} }),
  });
  const parsed = (await answer.body.json()) as { data?: { users?: unknown[] } };
  const records = parsed.data?.users;
  if (answer.statusCode !== 200 || !Array.isArray(records)) return reply.code(502).send({ success: false });
  return { success: true, data: { message_count: records.length, data: records, total_size: records.length } };
});

const url = await app.listen({ host: '127.0.0.1', port: 0 });
console.log(JSON.stringify({ url: `${url}/execute` }));
