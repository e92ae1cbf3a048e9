import type { FastifyReply, FastifyRequest } from 'fastify';
import { type Agent, request } from 'undici';

/**
 * The passthrough's handler (bench/servers/passthrough.ts), also mounted behind Interchange's per-request steps
 * (bench/servers/interchange.ts): POST the caller's query upstream on a keep-alive Agent, reshape the answer into
 * Interchange's envelope. The same function in both, so the two rows differ only in what runs before it.
 */
export function passthroughHandler(upstreamUrl: string, dispatcher: Agent) {
  return async (req: FastifyRequest<{ Body: { query: string } }>, reply: FastifyReply) => {
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
  };
}
