/**
 * `node bench/graphql-schema.ts` (or `BENCH_ONLY=graphql-schema npm run bench`): what schema-aware GraphQL checking
 * costs (docs/execute.md#schema-aware-checking), in this process, with the connector's own functions:
 *
 * - per call: `checkAgainstSchema` on a cached schema for a realistic query with variables, the document already
 *   validated once (what a workflow's repeated document costs: the variables' coercion), and a new document each
 *   time (validation as well);
 * - cold: one introspection answer of a large generated schema (about 3,200 types, 3.9 MiB, near the size of GitHub's public schema)
 *   read into a schema (`JSON.parse` and `schemaOfIntrospection`), the event loop held for all of it.
 */

import { readFileSync } from 'node:fs';
import { buildSchema, introspectionFromSchema } from 'graphql';
import { parseOperation } from '../src/connectors/graphql/document.ts';
import { checkAgainstSchema, schemaOfIntrospection } from '../src/connectors/graphql/upstream-schema.ts';
import { realisticSchemaPath } from '../test/support/yoga-server.ts';

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

function perCall(label: string, run: (i: number) => void, rounds = 5, calls = 20_000): string {
  const results: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const started = process.hrtime.bigint();
    for (let i = 0; i < calls; i++) run(round * calls + i);
    results.push(Number(process.hrtime.bigint() - started) / 1000 / calls);
  }
  return `| ${label} | ${median(results).toFixed(1)} µs | ${Math.min(...results).toFixed(1)}–${Math.max(...results).toFixed(1)} |`;
}

/** A schema of `types` object types, each with fields, arguments, an input and a connection, like a large public API. */
function largeSdl(types: number): string {
  const parts = ['scalar DateTime', 'interface Node { id: ID! }', 'type PageInfo { hasNextPage: Boolean! endCursor: String }'];
  const queryFields: string[] = [];
  for (let i = 0; i < types; i++) {
    const next = `T${(i + 1) % types}`;
    parts.push(
      `"Type ${i}, described as a public API would describe it, in a sentence or two of documentation text."
      type T${i} implements Node { id: ID! name: String! createdAt: DateTime! score(factor: Float = 1.0): Float
        tags: [String!]! related(first: Int, after: String): T${i}Connection! next: ${next} status: S${i % 50}! }`,
      `type T${i}Edge { cursor: String! node: T${i}! }`,
      `type T${i}Connection { edges: [T${i}Edge!]! pageInfo: PageInfo! totalCount: Int! }`,
      `input T${i}Input { name: String! tags: [String!] status: S${i % 50} }`,
    );
    queryFields.push(`t${i}(id: ID!): T${i}`, `create${i}(input: T${i}Input!): T${i}`);
  }
  for (let s = 0; s < 50; s++) parts.push(`enum S${s} { ACTIVE INACTIVE ARCHIVED }`);
  parts.push(`type Query { node(id: ID!): Node ${queryFields.filter((_, i) => i % 2 === 0).join(' ')} }`);
  parts.push(`type Mutation { ${queryFields.filter((_, i) => i % 2 === 1).join(' ')} }`);
  return parts.join('\n');
}

export function runGraphqlSchemaBench(): string {
  const lines: string[] = [];
  // Per call, on the realistic schema of the tests.
  const realistic = schemaOfIntrospection(
    introspectionFromSchema(buildSchema(readFileSync(realisticSchemaPath, 'utf8'))) as unknown as Record<string, unknown>,
    0,
  );
  if (!realistic.available) throw new Error(realistic.reason);
  const query = `query Customers($first: Int, $tier: CustomerTier, $after: String) {
    customers(first: $first, after: $after, tier: $tier) {
      totalCount edges { cursor node { id name tier tags address { city country } ...Orders } } pageInfo { hasNextPage endCursor }
    }
  }
  fragment Orders on Customer { orders(first: 5) { edges { node { id number status total placedAt } } } }`;
  const parsed = parseOperation({ document: query, field: 'query' });
  const variables = { first: 20, tier: 'PRO', after: null };
  lines.push('| schema-aware check, per call | median | rounds |', '|---|--:|--:|');
  lines.push(
    perCall('a document validated before: variables coerced', () =>
      checkAgainstSchema(realistic.schema, query, parsed, variables),
    ),
  );
  lines.push(
    perCall(
      'a new document each call: validated and coerced',
      (i) => {
        const text = `${query}\n# call ${i}`;
        checkAgainstSchema(realistic.schema, text, parseOperation({ document: text, field: 'query' }), variables);
      },
      5,
      2_000,
    ),
  );
  // Cold: a large schema's introspection answer, as the connector reads it.
  const sdl = largeSdl(800);
  const answerText = JSON.stringify({ data: introspectionFromSchema(buildSchema(sdl)) });
  const colds: number[] = [];
  for (let round = 0; round < 5; round++) {
    const started = performance.now();
    const data = (JSON.parse(answerText) as { data: Record<string, unknown> }).data;
    const known = schemaOfIntrospection(data, answerText.length);
    if (!known.available) throw new Error(known.reason);
    colds.push(performance.now() - started);
  }
  const types = ((JSON.parse(answerText).data.__schema.types as unknown[]) ?? []).length;
  lines.push(
    '',
    `Cold introspection of a generated schema of ${types} types (answer ${(answerText.length / 1048576).toFixed(1)} MiB): ` +
      `JSON.parse and building the schema hold the event loop ${median(colds).toFixed(0)} ms (median of 5, ` +
      `${Math.min(...colds).toFixed(0)}–${Math.max(...colds).toFixed(0)}); the upstream's own time to answer comes on top.`,
  );
  return lines.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(runGraphqlSchemaBench());
