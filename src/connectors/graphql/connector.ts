import { ApiError, type ValidationIssue } from '../../core/errors.ts';
import { RawJson, rawJsonArray } from '../../core/raw-json.ts';
import { authSecretPaths } from '../../credentials/schemes.ts';
import { tlsSecretPaths } from '../../egress/tls-config.ts';
import type { CatalogSettings } from '../../integrations/catalog-settings.ts';
import { redactReply } from '../../secrets/redact.ts';
import { bufferOf, failureOf, offThreadMinBytes, readOffThread } from '../../transport/answer-workers.ts';
import type { UpstreamResponse } from '../../transport/upstream.ts';
import type { CatalogOperation } from '../catalog.ts';
import {
  type Connection,
  type ConnectorContext,
  type ConnectorDefinition,
  type ConnectorResult,
  defineConnector,
  type PrimitiveCall,
  type SchemaView,
} from '../connector.ts';
import type { DataMessage, RecordsMessage } from './answer-worker.ts';
import { catalogDocumentIssues, graphqlCatalog } from './catalog.ts';
import { type Endpoint, endpointOf } from './endpoint.ts';
import { paginate } from './pagination.ts';
import { countNonNullRootFields, pageOfAnswer, type RecordsPage, recordCount } from './records.ts';
import { checkCall, cursorVariableOf, requestIssues } from './request-checks.ts';
import { readGraphqlResponse } from './response.ts';
import { SchemaCache } from './schema-cache.ts';
import { configProperties, type ReceiveFields, receiveSchema, type SendFields, sendSchema } from './schemas.ts';
import {
  type CheckedSchema,
  introspectionMaxBytes,
  introspectionQuery,
  type KnownSchema,
  noSchema,
  schemaOfIntrospection,
  sdlOf,
} from './upstream-schema.ts';
import { withoutCredentials } from './url.ts';

const defaultMaxPages = 10;

/** The module a worker thread reads large answers with. */
const answerWorker = new URL('./answer-worker.ts', import.meta.url);

const withErrors = (result: ConnectorResult, errors: unknown[] | undefined): ConnectorResult =>
  errors && errors.length > 0 ? { ...result, errors } : result;

/** A single page's records as the reply gives them. */
function pageResult(page: RecordsPage): ConnectorResult {
  const count = recordCount(page.records);
  const records = Array.isArray(page.records) ? page.records : rawJsonArray([page.records.text.subarray(1, -1)]);
  return withErrors(
    { data: { message_count: count, data: records, total_size: page.totalSize }, messageCount: count },
    page.errors,
  );
}

/**
 * A GraphQL integration bound for one execute. A class, its methods on the prototype: it holds two references per
 * call in flight, where a literal of closures held some fourteen functions and their scopes, ~1 KB per call.
 */
class GraphqlConnection implements Connection<SendFields, ReceiveFields> {
  readonly #endpoint: Endpoint;
  readonly #context: ConnectorContext;
  readonly #schemas: SchemaCache<CheckedSchema>;

  constructor(endpoint: Endpoint, context: ConnectorContext, schemas: SchemaCache<CheckedSchema>) {
    this.#endpoint = endpoint;
    this.#context = context;
    this.#schemas = schemas;
  }

  /**
   * The document's syntax, then (with `validate_schema`) the document and its variables against the upstream's
   * schema: answered at once when the schema is cached, after its introspection on first use (see Connection.prepare).
   */
  prepare(...call: PrimitiveCall<SendFields, ReceiveFields>): ValidationIssue[] | Promise<ValidationIssue[]> {
    const issues = requestIssues(...call);
    if (issues.length > 0 || !this.#endpoint.validateSchema) return issues;
    const { schemaKey, schemaVersion } = this.#endpoint;
    const known = this.#schemas.peek(schemaKey, schemaVersion);
    if (known !== undefined) {
      checkCall(known, call);
      return issues;
    }
    // An async call is accepted without waiting for a first introspection: its run checks it.
    if (this.#context.accepting) return issues;
    return this.#knownSchema().then((loaded) => {
      checkCall(loaded, call);
      return issues;
    });
  }

  /** The upstream's schema from the cache, or read by introspection (shared by concurrent first calls). */
  #knownSchema(): Promise<KnownSchema> {
    const { schemaKey, schemaVersion, schemaTtlMs } = this.#endpoint;
    // For a call, any answer that is not a schema (GraphQL errors, a non-2xx status, junk) is a refusal: the call goes
    // on, checked for syntax only, and meets whatever its own request meets.
    return this.#schemas.get(schemaKey, schemaVersion, schemaTtlMs, () => this.#introspect(() => true));
  }

  /**
   * Reads the upstream's schema by the standard introspection query, within the call's deadline and 5 MiB. An answer
   * over the bound, without a usable `__schema`, or that `refuses` takes for a refusal is no schema, with its reason;
   * any other failure rejects, as the call's own request would have.
   */
  #introspect(refuses: (error: ApiError) => boolean): Promise<KnownSchema> {
    return this.#post(introspectionQuery(), undefined, undefined, false, introspectionMaxBytes).then(
      (response) => {
        try {
          const answer = readGraphqlResponse(response.status, response.headers, response.body);
          return schemaOfIntrospection(answer.data, response.size);
        } catch (error) {
          if (error instanceof ApiError && refuses(error)) return noSchema(refusalReason(error));
          throw error;
        }
      },
      (error: unknown) => {
        // Over the bound is no schema; no connection, a timeout, an open breaker are the call's failure.
        if (error instanceof ApiError && error.code === 'upstream_response_too_large') return noSchema(refusalReason(error));
        throw error;
      },
    );
  }

  /**
   * `write`: the document may change something upstream (a send's mutation). A receive's query and the test's
   * introspection change nothing: they are retried after timeouts, resets, 502 and 504 too (docs/resilience.md).
   */
  #post(
    query: string,
    variables: Record<string, unknown> | undefined,
    operationName: string | undefined,
    write: boolean,
    maxBodyBytes?: number,
  ): Promise<UpstreamResponse> {
    const body = JSON.stringify({ query, variables: variables ?? {}, ...(operationName && { operationName }) });
    const { url, headers, timeoutMs } = this.#endpoint;
    const context = this.#context;
    return context.credentials.send(context.dispatcher, {
      url,
      method: 'POST',
      headers,
      body,
      timeoutMs,
      maxBodyBytes: Math.min(maxBodyBytes ?? context.upstreamMaxBytes, context.upstreamMaxBytes),
      budget: context.budget,
      write,
    });
  }

  /** A large answer is read by a worker thread (answer-worker.ts), so that its megabytes never hold the event loop. */
  #offThread<T>(name: string, response: UpstreamResponse, task: object): Promise<T> {
    const context = this.#context;
    return readOffThread<T>(context.workers, answerWorker, name, response, context.secrets.secrets, task);
  }

  /** A page of records: read here when small (no promise), by a worker thread when large. */
  #readRecords(response: UpstreamResponse, recordsPath: string | undefined): RecordsPage | Promise<RecordsPage> {
    if (response.size < offThreadMinBytes) {
      return pageOfAnswer(readGraphqlResponse(response.status, response.headers, response.body), recordsPath);
    }
    return this.#offThread<RecordsMessage>('readRecordsAnswer', response, { recordsPath }).then((read) => {
      if (!read.ok) throw failureOf(read.failure);
      const { text, count, ...page } = read;
      return { ...page, records: { text: bufferOf(text), count } };
    });
  }

  /** A mutation's answer: its data as objects, or as text when a worker thread read it. */
  async #readData(response: UpstreamResponse): Promise<{ data: unknown; rootFields: number; errors?: unknown[] }> {
    if (response.size < offThreadMinBytes) {
      const answer = readGraphqlResponse(response.status, response.headers, response.body);
      return { ...answer, rootFields: countNonNullRootFields(answer.data) };
    }
    const read = await this.#offThread<DataMessage>('readDataAnswer', response, {});
    if (!read.ok) throw failureOf(read.failure);
    return { data: new RawJson([bufferOf(read.text)]), rootFields: read.rootFields, ...(read.errors && { errors: read.errors }) };
  }

  async send(fields: SendFields): Promise<ConnectorResult> {
    const { mutation, variables, operation_name: operationName } = fields;
    const answer = await this.#readData(await this.#post(mutation, variables, operationName, true));
    const messageCount = answer.rootFields;
    return withErrors(
      { data: { message_count: messageCount, data: answer.data, response: { data: answer.data } }, messageCount },
      answer.errors,
    );
  }

  /**
   * One page: chained callbacks, not an async function, whose suspended frame would be held for the whole upstream
   * wait. It may throw before its promise exists (a URL credentials cannot go to): the executor takes that as a rejection.
   */
  receive(fields: ReceiveFields): Promise<ConnectorResult> {
    if (fields.paginate) return this.#receivePages(fields);
    const { query, variables, operation_name: operationName, records_path: recordsPath } = fields;
    return this.#post(query, variables, operationName, false)
      .then((response) => this.#readRecords(response, recordsPath))
      .then(pageResult);
  }

  async #receivePages(request: ReceiveFields): Promise<ConnectorResult> {
    const { query, variables, operation_name: operationName, records_path: recordsPath, paginate: pages } = request;
    const maxPages = (typeof pages === 'object' ? pages.max_pages : undefined) ?? defaultMaxPages;
    const variable = cursorVariableOf(request);
    const context = this.#context;
    /** Records read here as redacted JSON array members, to join pages read by a worker thread. */
    const membersText = (records: unknown[]) =>
      Buffer.from(redactReply({ data: records }, context.secrets).text.slice('{"data":['.length, -2));
    // The first page goes with the caller's variables as given (a starting cursor included).
    const result = await paginate(
      async (after) =>
        this.#readRecords(
          await this.#post(query, after === null ? variables : { ...variables, [variable]: after }, operationName, false),
          recordsPath,
        ),
      { maxPages, membersText },
    );
    return withErrors(
      {
        data: { message_count: result.count, data: result.records, total_size: result.totalSize, pages: result.pages },
        messageCount: result.count,
      },
      result.errors,
    );
  }

  /**
   * The connection probe `{ __schema { queryType { name } } }` (its `query_type`), then, with `validate_schema`, the
   * standard introspection query, read fresh (and kept for the calls that follow). The connection works when the
   * upstream answers the probe, with data or GraphQL errors; the full introspection may be refused (GraphQL errors, or
   * an answer over 5 MiB: then `details.schema` says why). Any other failure (unreachable, 401, a 5xx without GraphQL
   * errors) fails the test. An upstream that answers the small probe but refuses the full introspection still names
   * its query type.
   */
  async test(): Promise<ConnectorResult> {
    const started = performance.now();
    const queryType = await this.#probeQueryType();
    const latencyMs = Math.round(performance.now() - started);
    const { schemaKey, schemaVersion, schemaTtlMs, validateSchema } = this.#endpoint;
    // For a test only GraphQL errors refuse introspection: a 401 or a 5xx fails the test, as it would fail a call.
    const known = validateSchema
      ? await this.#introspect((error) => error.code === 'graphql_errors')
      : noSchema('validate_schema is false: the upstream’s schema is not read, and calls are checked for syntax only.');
    if (validateSchema) this.#schemas.put(schemaKey, schemaVersion, schemaTtlMs, known);
    return {
      data: {
        message: 'GraphQL connection test succeeded',
        details: {
          api_base_url: withoutCredentials(this.#endpoint.url),
          query_type: queryType,
          latency_ms: latencyMs,
          schema: known.available
            ? {
                available: true,
                query_type: known.schema.queryType,
                mutation_type: known.schema.mutationType,
                types: known.schema.types,
                fetched_at: known.fetchedAt,
              }
            : { available: false, reason: known.reason },
        },
      },
      messageCount: 0,
    };
  }

  /**
   * The seed's connection probe: the query type's name, or null when the upstream answers it with GraphQL errors or
   * without one. Any other failure is the test's.
   */
  async #probeQueryType(): Promise<string | null> {
    const response = await this.#post(connectionProbe, undefined, undefined, false);
    try {
      const answer = readGraphqlResponse(response.status, response.headers, response.body);
      const name = (answer.data as { __schema?: { queryType?: { name?: unknown } } } | null)?.__schema?.queryType?.name;
      return typeof name === 'string' ? name : null;
    } catch (error) {
      if (error instanceof ApiError && error.code === 'graphql_errors') return null;
      throw error;
    }
  }

  /**
   * The operation catalogue (docs/catalog.md#graphql): the saved documents and, with `root_fields`, the root fields,
   * typed by the upstream's schema when it is known (read as a call reads it; not with `validate_schema: false`).
   */
  async catalog(settings: CatalogSettings): Promise<CatalogOperation[]> {
    const known = this.#endpoint.validateSchema ? await this.#knownSchema() : undefined;
    const schema = known?.available ? known.schema.schema : undefined;
    return graphqlCatalog(schema, { documents: [...settings.documents], root_fields: settings.root_fields });
  }

  catalogDocumentIssues(documents: unknown): ValidationIssue[] {
    const { schemaKey, schemaVersion, validateSchema } = this.#endpoint;
    const known = validateSchema ? this.#schemas.peek(schemaKey, schemaVersion) : undefined;
    return catalogDocumentIssues(documents, known?.available ? known.schema.schema : undefined);
  }

  /** The upstream's schema as SDL (docs/api.md), from the cache or read now. */
  async schema(): Promise<SchemaView> {
    const known = await this.#knownSchema();
    if (!known.available) return { available: false, sdl: null, reason: known.reason, fetched_at: known.fetchedAt };
    return { available: true, sdl: sdlOf(known.schema), fetched_at: known.fetchedAt };
  }
}

/** What `test` sends first (docs/execute.md#graphql-test): the smallest question every GraphQL server answers. */
export const connectionProbe = '{ __schema { queryType { name } } }';

/** Why an introspection answer gave no schema, in a sentence `test` and the schema endpoint show. */
function refusalReason(error: ApiError): string {
  if (error.code === 'upstream_response_too_large') {
    return `The introspection answer is larger than ${introspectionMaxBytes} bytes; calls are checked for syntax only.`;
  }
  const status = error.details?.upstream_status;
  const answered = typeof status === 'number' ? ` (HTTP ${status})` : '';
  return `The upstream refused introspection${answered}: ${error.message}`;
}

export interface GraphqlConnectorOptions {
  /** The bound on every upstream schema kept, together (IX_GRAPHQL_SCHEMA_CACHE_MB). */
  schemaCacheBytes: number;
}

/**
 * GraphQL over HTTP POST (docs/execute.md#graphql-connector), with the cache of its upstreams' schemas
 * (docs/execute.md#schema-aware-checking).
 */
export function graphqlConnector(options: GraphqlConnectorOptions): ConnectorDefinition {
  const schemas = new SchemaCache<CheckedSchema>({ maxBytes: options.schemaCacheBytes });
  return defineConnector<typeof sendSchema, typeof receiveSchema>({
    id: 'graphql-1.0.0',
    configProperties,
    secretFields: ['token', ...authSecretPaths, ...tlsSecretPaths],
    authShorthands: ['token'],
    shorthandAuth: (config) =>
      typeof config.token === 'string' && config.token !== '' ? { type: 'bearer', token: config.token } : undefined,
    urlFields: ['base_url', 'auth.token_url'],
    defaults: { timeout_seconds: 30, validate_schema: true, schema_ttl_seconds: 600 },
    offers: ['send', 'receive', 'sync', 'batch', 'test'],
    requestSchemas: { send: sendSchema, receive: receiveSchema },
    connect: (integration, context) => new GraphqlConnection(endpointOf(integration), context, schemas),
    catalogDocumentIssues: (documents) => catalogDocumentIssues(documents, undefined),
    stats: () => ({ cacheHits: schemas.hits, cacheMisses: schemas.loads, cacheEntries: schemas.size, cacheBytes: schemas.bytes }),
  });
}
