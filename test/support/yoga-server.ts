import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { useDisableIntrospection } from '@graphql-yoga/plugin-disable-introspection';
import { GraphQLError, Kind, type SelectionSetNode, type ValidationRule, type ValueNode } from 'graphql';
import { createSchema, createYoga } from 'graphql-yoga';

const fixtures = resolve(import.meta.dirname, './fixtures/graphql-realistic');

/** The shop/CRM schema that both realistic servers (graphql-yoga here, graphene in graphene-server.ts) serve. */
export const realisticSchemaPath = resolve(fixtures, 'schema.graphql');

/**
 * A GraphQL server the project did not write, started by a test on 127.0.0.1, behind a front that counts what
 * reaches it. The counts are updated as each request arrives, so they are exact once its answer has been read.
 */
export interface CountingGraphqlServer {
  /** `http://127.0.0.1:PORT/graphql` */
  url: string;
  /** Every HTTP request received, whatever its method, path or answer. */
  readonly requests: number;
  /** The JSON body of each request that had one, in order (the text when it is not JSON). */
  readonly bodies: unknown[];
  /** Requests whose `query` (JSON body or GET parameter) contains `__schema`. */
  readonly introspections: number;
  close(): Promise<void>;
}

export interface RealisticServerOptions {
  /** `false` refuses documents that select `__schema` or `__type`, as a production deployment does (default `true`). */
  introspection?: boolean;
  /**
   * Refuses documents whose selections nest deeper than this, fragments followed (a depth limit, as GraphQL armors
   * deploy): the small probe `{ __schema { queryType { name } } }` passes, the full introspection query does not.
   */
  maxDepth?: number;
}

/** A validation rule refusing operations nested deeper than `limit` (fragment spreads count as their selections). */
function depthLimit(limit: number): ValidationRule {
  return (context) => {
    const depthOf = (set: SelectionSetNode | undefined, seen: Set<string>): number => {
      let deepest = 0;
      for (const selection of set?.selections ?? []) {
        if (selection.kind === Kind.FIELD) {
          deepest = Math.max(deepest, selection.selectionSet ? 1 + depthOf(selection.selectionSet, seen) : 1);
        } else if (selection.kind === Kind.INLINE_FRAGMENT) {
          deepest = Math.max(deepest, depthOf(selection.selectionSet, seen));
        } else if (!seen.has(selection.name.value)) {
          const fragment = context.getFragment(selection.name.value);
          deepest = Math.max(deepest, depthOf(fragment?.selectionSet, new Set([...seen, selection.name.value])));
        }
      }
      return deepest;
    };
    return {
      OperationDefinition(node) {
        const depth = depthOf(node.selectionSet, new Set());
        if (depth > limit)
          context.reportError(new GraphQLError(`The query is ${depth} levels deep; at most ${limit} are allowed.`));
      },
    };
  };
}

/** Answers one request, whose body the front has already read. */
export type ForwardRequest = (req: IncomingMessage, body: Buffer, res: ServerResponse) => Promise<void>;

/**
 * Starts test/support/fixtures/graphql-realistic/schema.graphql served by graphql-yoga 5 (on graphql-js 16) over the seed in
 * data.json, each server with its own copy. Answers are yoga's: to `Accept: application/json`, 200 for a document that
 * fails validation, 400 for a variable of the wrong type; resolver errors masked unless thrown as GraphQLError. With
 * `introspection: false`, @graphql-yoga/plugin-disable-introspection (graphql-js's NoSchemaIntrospectionCustomRule)
 * fails `__schema` and `__type` in validation.
 *
 * @example const yoga = await startYogaServer({ introspection: false }); await fetch(yoga.url, …); yoga.requests; await yoga.close();
 */
export function startYogaServer(options: RealisticServerOptions = {}): Promise<CountingGraphqlServer> {
  const yoga = createYoga({
    schema: createSchema({ typeDefs: readFileSync(realisticSchemaPath, 'utf8'), resolvers: shopResolvers() }),
    plugins: [
      ...(options.introspection === false ? [useDisableIntrospection()] : []),
      ...(options.maxDepth === undefined
        ? []
        : [
            {
              onValidate: ({ addValidationRule }: { addValidationRule(rule: ValidationRule): void }) =>
                addValidationRule(depthLimit(options.maxDepth as number)),
            },
          ]),
    ],
    logging: false,
    graphiql: false,
    landingPage: false,
  });
  return serveCounting(async (req, body, res) => {
    const headers = Object.entries(req.headers).flatMap(([name, value]) =>
      (Array.isArray(value) ? value : value === undefined ? [] : [value]).map((item): [string, string] => [name, item]),
    );
    const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
    const response = await yoga.fetch(`http://127.0.0.1${req.url}`, { method: req.method, headers, body: hasBody ? body : null });
    res.writeHead(response.status, [...response.headers].flat()).end(Buffer.from(await response.arrayBuffer()));
  });
}

/**
 * Serves `forward` on 127.0.0.1 at a free port, counting every request before `forward` answers it (a 502 when it
 * throws). Shared by the realistic GraphQL servers so that they count alike; `close()` runs `afterClose` last.
 *
 * @example const server = await serveCounting(async (req, body, res) => { res.end('{}'); }, () => child.close());
 */
export async function serveCounting(forward: ForwardRequest, afterClose = async () => {}): Promise<CountingGraphqlServer> {
  const bodies: unknown[] = [];
  let requests = 0;
  let introspections = 0;
  const server = createServer(async (req, res) => {
    requests++;
    try {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const body = Buffer.concat(chunks);
      const parsed = body.length > 0 ? parseJson(body.toString('utf8')) : undefined;
      if (parsed !== undefined) bodies.push(parsed);
      const query =
        (parsed as { query?: unknown } | null | undefined)?.query ??
        new URL(req.url ?? '/', 'http://127.0.0.1').searchParams.get('query');
      if (typeof query === 'string' && query.includes('__schema')) introspections++;
      await forward(req, body, res);
    } catch (error) {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`the test front could not forward the request: ${error}`);
    }
  });
  server.listen(0, '127.0.0.1');
  await new Promise((ready) => server.once('listening', ready));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/graphql`,
    get requests() {
      return requests;
    },
    bodies,
    get introspections() {
      return introspections;
    },
    async close() {
      await new Promise((done) => {
        server.close(done);
        server.closeAllConnections();
      });
      await afterClose();
    },
  };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

interface Customer {
  __typename: 'Customer';
  id: string;
  name: string;
  email: string | null;
  tier: string;
  tags: string[];
  createdAt: string;
  [field: string]: unknown;
}

interface Order {
  __typename: 'Order';
  id: string;
  number: string;
  status: string;
  customerId: string;
  lines: Array<{ sku: string; quantity: number; unitPrice: number }>;
  version: number;
}

/** Every customer a mutation creates gets this instant: answers stay deterministic. */
const now = '2024-06-01T12:00:00Z';

/** The resolvers over a fresh copy of data.json; the same behaviour as test/support/fixtures/graphene/schema.py. */
function shopResolvers() {
  const seed = JSON.parse(readFileSync(resolve(fixtures, 'data.json'), 'utf8')) as { customers: Customer[]; orders: Order[] };
  const customers = seed.customers.map((customer) => ({ ...customer, __typename: 'Customer' as const }));
  const orders = seed.orders.map((order) => ({ ...order, __typename: 'Order' as const }));
  const find = <T extends { id: string }>(items: T[], id: string) => items.find((item) => item.id === id) ?? null;
  type Page = { first?: number | null; after?: string | null };
  return {
    // Plain objects, not GraphQLScalarType: graphql-tools copies every property of those, the description SDL gave too.
    DateTime: {
      serialize: same,
      parseValue: instant,
      parseLiteral: (node: ValueNode) => instant(node.kind === Kind.STRING ? node.value : undefined),
    },
    JSON: { serialize: same, parseValue: same, parseLiteral: literal },
    Node: { __resolveType: (node: Customer | Order) => node.__typename },
    SearchResult: { __resolveType: (node: Customer | Order) => node.__typename },
    Customer: {
      orders: (customer: Customer, { first, after }: Page) =>
        connection(
          orders.filter((order) => order.customerId === customer.id),
          first,
          after,
        ),
    },
    Order: {
      customer: (order: Order) => find(customers, order.customerId),
      total: (order: Order) => order.lines.reduce((sum, line) => sum + line.quantity * line.unitPrice, 0),
    },
    Query: {
      node: (_: unknown, { id }: { id: string }) => find(customers, id) ?? find(orders, id),
      customer: (_: unknown, { id }: { id: string }) => find(customers, id),
      customers: (_: unknown, { first, after, tier }: Page & { tier?: string | null }) =>
        connection(
          customers.filter((customer) => tier == null || customer.tier === tier),
          first,
          after,
        ),
      orders: (_: unknown, { first, after, status }: Page & { status?: string | null }) =>
        connection(
          orders.filter((order) => status == null || order.status === status),
          first,
          after,
        ),
      search: (_: unknown, { text }: { text: string }) => {
        const wanted = text.toLowerCase();
        const found = customers.filter(
          (customer) => customer.name.toLowerCase().includes(wanted) || (customer.email ?? '').toLowerCase().includes(wanted),
        );
        return [...found, ...orders.filter((order) => order.number.toLowerCase().includes(wanted))];
      },
      serverTime: () => now,
    },
    Mutation: {
      createCustomer: (_: unknown, { input }: { input: Record<string, unknown> & { name: string } }) => {
        const customer: Customer = {
          __typename: 'Customer',
          id: `customer-${customers.length + 1}`,
          name: input.name,
          email: (input.email as string | undefined) ?? null,
          tier: (input.tier as string | undefined) ?? 'FREE',
          tags: (input.tags as string[] | undefined) ?? [],
          address: input.address ?? null,
          createdAt: now,
          metadata: input.metadata ?? null,
          phone: null,
        };
        customers.push(customer);
        return { customer, clientMutationId: input.clientMutationId ?? null };
      },
      setOrderStatus: (_: unknown, args: { orderId: string; status: string; expectedVersion: number }) => {
        const order = find(orders, args.orderId);
        if (!order) throw new GraphQLError(`No order ${args.orderId}`);
        if (order.version !== args.expectedVersion) {
          throw new GraphQLError(`Order ${order.id} is at version ${order.version}, not ${args.expectedVersion}`);
        }
        Object.assign(order, { status: args.status, version: order.version + 1 });
        return order;
      },
    },
  };
}

const same = (value: unknown) => value;

const cursorOf = (offset: number) => Buffer.from(`arrayconnection:${offset}`).toString('base64');

function offsetOf(cursor: string): number {
  const [prefix, offset, ...rest] = Buffer.from(cursor, 'base64').toString('utf8').split(':');
  if (prefix === 'arrayconnection' && rest.length === 0 && /^\d+$/.test(offset)) return Number(offset);
  throw new GraphQLError(`Invalid cursor: ${cursor}`);
}

/** A Relay connection over `items`: `first` of them (10 by default, 100 at most) after the cursor `after`. */
function connection<T>(items: T[], first?: number | null, after?: string | null) {
  if (first != null && !(first >= 0 && first <= 100)) throw new GraphQLError('first must be between 0 and 100');
  const start = after == null ? 0 : offsetOf(after) + 1;
  const page = items.slice(start, start + (first ?? 10));
  return {
    edges: page.map((node, i) => ({ cursor: cursorOf(start + i), node })),
    pageInfo: {
      hasNextPage: start + page.length < items.length,
      endCursor: page.length > 0 ? cursorOf(start + page.length - 1) : null,
    },
    totalCount: items.length,
  };
}

function instant(value: unknown): string {
  if (typeof value !== 'string' || !/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/.test(value) || Number.isNaN(Date.parse(value))) {
    throw new TypeError('Expected an ISO 8601 instant in UTC, e.g. 2024-01-15T09:30:00Z');
  }
  return value;
}

/** A JSON value written in the document. */
function literal(node: ValueNode): unknown {
  switch (node.kind) {
    case Kind.OBJECT:
      return Object.fromEntries(node.fields.map((field) => [field.name.value, literal(field.value)]));
    case Kind.LIST:
      return node.values.map(literal);
    case Kind.INT:
    case Kind.FLOAT:
      return Number(node.value);
    case Kind.STRING:
    case Kind.BOOLEAN:
      return node.value;
    default:
      return null;
  }
}
