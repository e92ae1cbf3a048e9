import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { buildSchema } from 'graphql';
import { createHandler } from 'graphql-http';

/** A real GraphQL-over-HTTP upstream for the tests: graphql-js behind graphql-http's spec-compliant handler. */
export interface GraphqlServer {
  /** `http://127.0.0.1:PORT/graphql`; any path containing `/graphql` is served too (e.g. `/v2/graphql/x`). */
  url: string;
  /** `http://127.0.0.1:PORT`, for building other paths. */
  origin: string;
  /** Every request received, in order, whatever its path or answer. */
  requests: RecordedRequest[];
  close(): Promise<void>;
}

export interface RecordedRequest {
  method: string;
  /** Path and query string as sent. */
  url: string;
  headers: IncomingHttpHeaders;
  /** The JSON body (`{query, variables, operationName}`), or the raw text when it is not JSON. */
  body: unknown;
}

export interface GraphqlServerOptions {
  /** When set, requests without `Authorization: Bearer <token>` get a 401 (a non-GraphQL JSON body, as GitHub sends). */
  token?: string;
  /** Gzip every answer (with `Content-Encoding: gzip`). */
  gzip?: boolean;
  /** How many users are seeded (default 25): `1`…`n`, named `User 1`…, e-mail `user1@example.com`, every third one without. */
  userCount?: number;
  /** The port on 127.0.0.1 (default: a free one). */
  port?: number;
}

interface User {
  id: string;
  name: string;
  email: string | null;
}

const schema = buildSchema(`
  type User { id: ID!, name: String!, email: String }
  type UserEdge { cursor: String!, node: User! }
  type PageInfo { hasNextPage: Boolean!, endCursor: String }
  type UserConnection { edges: [UserEdge!]!, nodes: [User!]!, pageInfo: PageInfo!, totalCount: Int! }
  type Query {
    users(first: Int, after: String): UserConnection!
    user(id: ID!): User
    usersList: [User!]!
    broken: String
    brokenRequired: String!
  }
  type Mutation {
    createUser(name: String!, email: String): User!
    deleteUser(id: ID!): Boolean
    renameUser(id: ID!, name: String!): User
  }
`);

const cursorOf = (id: string) => Buffer.from(`user:${id}`).toString('base64');

/** Builds the root resolvers over this server's own users, so every instance starts from the same seed. */
function rootValueFor(users: User[]) {
  let nextId = users.length + 1;
  return {
    users({ first = 10, after }: { first?: number; after?: string }) {
      const start = after === undefined || after === null ? 0 : users.findIndex((user) => cursorOf(user.id) === after) + 1;
      if (start === 0 && after) throw new Error(`Unknown cursor: ${after}`);
      const page = users.slice(start, start + first);
      return {
        edges: page.map((node) => ({ cursor: cursorOf(node.id), node })),
        nodes: page,
        pageInfo: {
          hasNextPage: start + page.length < users.length,
          endCursor: page.length === 0 ? null : cursorOf(page[page.length - 1].id),
        },
        totalCount: users.length,
      };
    },
    user: ({ id }: { id: string }) => users.find((user) => user.id === id) ?? null,
    usersList: () => users,
    broken() {
      throw new Error('broken on purpose');
    },
    brokenRequired() {
      throw new Error('broken on purpose');
    },
    createUser({ name, email }: { name: string; email?: string | null }) {
      const user = { id: String(nextId++), name, email: email ?? null };
      users.push(user);
      return user;
    },
    /** Null for an unknown id: a nullable mutation root field. */
    renameUser({ id, name }: { id: string; name: string }) {
      const user = users.find((candidate) => candidate.id === id);
      if (user === undefined) return null;
      user.name = name;
      return user;
    },
    deleteUser({ id }: { id: string }) {
      const index = users.findIndex((user) => user.id === id);
      if (index === -1) return false;
      users.splice(index, 1);
      return true;
    },
  };
}

function seedUsers(count: number): User[] {
  return Array.from({ length: count }, (_, i) => ({
    id: String(i + 1),
    name: `User ${i + 1}`,
    email: (i + 1) % 3 === 0 ? null : `user${i + 1}@example.com`,
  }));
}

/**
 * Starts a GraphQL server on 127.0.0.1 and an ephemeral port.
 *
 * @example const upstream = await startGraphqlServer({ token: 't0k' }); … await upstream.close();
 */
export async function startGraphqlServer(options: GraphqlServerOptions = {}): Promise<GraphqlServer> {
  const requests: RecordedRequest[] = [];
  // The core handler (not the node:http adapter) so the body can be recorded before it is handled.
  const handle = createHandler({ schema, rootValue: rootValueFor(seedUsers(options.userCount ?? 25)) });

  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: parseJsonOrText(text) });

    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (!path.includes('/graphql')) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Not Found');
      return;
    }
    if (options.token !== undefined && req.headers.authorization !== `Bearer ${options.token}`) {
      res.writeHead(401, { 'content-type': 'application/json' }).end('{"message":"Bad credentials"}');
      return;
    }
    const [body, init] = await handle({
      method: req.method ?? 'GET',
      url: req.url ?? '/',
      headers: req.headers,
      body: text,
      raw: req,
      context: undefined,
    });
    const headers: Record<string, string> = { ...init.headers };
    let payload: string | Buffer | null = body;
    if (options.gzip && payload !== null) {
      payload = gzipSync(payload);
      headers['content-encoding'] = 'gzip';
    }
    res.writeHead(init.status, init.statusText, headers).end(payload);
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;
  return {
    url: `${origin}/graphql`,
    origin,
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

function parseJsonOrText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
