/**
 * The GraphQL upstream of bench/execute-path.ts, as cheap as a server can be so that the gateways' own cost shows:
 * `node:http`, any POST (whatever its path or query) answered with the same precomputed 10 users. Listens on a free
 * port of 127.0.0.1 and prints one line, {"url": "http://127.0.0.1:PORT/graphql"}, once it does.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const users = Array.from({ length: 10 }, (_, i) => ({
  id: String(i + 1),
  name: `User ${i + 1}`,
  email: `user${i + 1}@example.com`,
}));
const answer = Buffer.from(JSON.stringify({ data: { users } }));
const headers = { 'content-type': 'application/json', 'content-length': answer.length };

/** DELAY_MS: each answer waits this long (a slow upstream, for bench/event-loop.ts); none by default. */
const delayMs = Number(process.env.DELAY_MS ?? 0);

const server = createServer((req, res) => {
  if (req.method !== 'POST') {
    res.writeHead(405).end();
    return;
  }
  // The body is read to its end, as a real upstream would, before the answer goes out.
  req.resume();
  const send = () => res.writeHead(200, headers).end(answer);
  req.once('end', () => (delayMs > 0 ? setTimeout(send, delayMs) : send()));
});
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  console.log(JSON.stringify({ url: `http://127.0.0.1:${port}/graphql` }));
});
