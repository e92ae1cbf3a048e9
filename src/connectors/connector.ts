import type { FastifyBaseLogger } from 'fastify';
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import type { Dispatcher } from 'undici';
import type { ValidationIssue } from '../core/errors.ts';
import type { OAuth2Sources } from '../credentials/oauth2-sources.ts';
import type { UpstreamCredentials } from '../credentials/upstream-credentials.ts';
import type { IntegrationDispatchers } from '../egress/integration-dispatchers.ts';
import type { CatalogSettings } from '../integrations/catalog-settings.ts';
import type { ResolvedIntegration } from '../integrations/resolved-integration.ts';
import type { CommonDefaults } from '../integrations/settings.ts';
import type { SecretMatcher } from '../secrets/secret-matcher.ts';
import type { AnswerWorkers } from '../transport/answer-workers.ts';
import type { ExecuteBudget } from '../transport/budget.ts';
import type { CatalogOperation } from './catalog.ts';

/** The five operations of the execute endpoint; sync and batch are composed from send and receive by the executor. */
export const operations = ['send', 'receive', 'sync', 'batch', 'test'] as const;
export type Operation = (typeof operations)[number];
export type PrimitiveOperation = 'send' | 'receive';

/** What a connector's operation produced: `data` exactly as the API shows it. */
export interface ConnectorResult {
  data: Record<string, unknown>;
  messageCount: number;
  /** GraphQL errors that came with partial data: shown at the top level of the response. */
  errors?: unknown[];
}

/** Shared outbound plumbing, built once per app; a connector's own state (a cache) is its own. */
export interface SharedConnectorContext {
  dispatcher: Dispatcher;
  upstreamMaxBytes: number;
  log: FastifyBaseLogger;
  /** The worker threads that read large answers off the event loop. */
  workers: AnswerWorkers;
  /** This instance's OAuth2 access tokens, one source per integration. */
  oauth2: OAuth2Sources;
  /** The dispatchers of integrations with `config.tls`; `dispatcher` is the one for the execute's integration. */
  dispatchers: IntegrationDispatchers;
}

/**
 * What a connection runs with: the shared plumbing, this execute's own budget, which every upstream request spends, and
 * the matcher of the integration's secrets, which whatever it makes into text off the main thread must be redacted of.
 */
export interface ConnectorContext extends SharedConnectorContext {
  budget: ExecuteBudget;
  /** The secrets' matcher, access tokens issued during this execute included. */
  readonly secrets: SecretMatcher;
  /** The integration's credentials, which every request it makes goes through. */
  credentials: UpstreamCredentials;
  /**
   * True while an async call is checked before it is accepted (docs/async.md#accepting-a-call): the connection checks what it
   * knows now and reads nothing it could do without (the GraphQL connector checks against a schema it already keeps,
   * and leaves a first introspection to the run).
   */
  readonly accepting?: boolean;
}

type Fields = Record<string, unknown>;
/** A JSON schema that is an object (not `true`/`false`). */
type ObjectSchema = Exclude<JSONSchema, boolean>;

/** A send or a receive with its request fields, as `prepare` takes it. */
export type PrimitiveCall<Send = Fields, Receive = Fields> = ['send', Send] | ['receive', Receive];

/** A connector bound to one integration, taking the request fields its schemas describe. It knows nothing of HTTP routes. */
export interface Connection<Send = Fields, Receive = Fields> {
  send(request: Send): Promise<ConnectorResult>;
  receive(request: Receive): Promise<ConnectorResult>;
  test(): Promise<ConnectorResult>;
  /**
   * Everything the connector can know wrong about a send or receive before sending it, on fields its schema has
   * validated. The executor calls it before every send and receive runs: for a sync, for both parts before the first
   * runs; for a batch, for each entry before it runs; for an async call, before it is accepted.
   *
   * - It resolves with the problems of the request's fields themselves, which no schema can state (a GraphQL
   *   document's syntax, an element name XML cannot carry), paths relative to the fields given; the executor answers
   *   them as the schema's are, in one `400 validation_failed` (with both parts of a sync). A connection that finds
   *   any resolves with them at once, without looking further: nothing loaded, nothing sent.
   * - It rejects with what stops this request running against this integration (a method its WSDL lacks, params
   *   that do not fit it, a WSDL that cannot be loaded): that part's failure, as if the send or receive had thrown.
   * - A connection that needs nothing loaded may answer (or throw) at once, without a promise: a receive then reaches
   *   the upstream without waiting a turn of the microtask queue per layer.
   */
  prepare?(...call: PrimitiveCall<Send, Receive>): ValidationIssue[] | Promise<ValidationIssue[]>;
  /**
   * The upstream's schema as the connector knows it (read on first use, then cached), for
   * `GET /integrations/{id}/schema`; absent for a connector without one (SOAP). Rejects as a request would when the
   * upstream cannot be reached.
   */
  schema?(): Promise<SchemaView>;
  /**
   * The operation catalogue (docs/catalog.md): the entries the upstream offers, read with the integration's catalogue
   * settings (the WSDL loaded, the GraphQL schema read, as a call would). Absent for a connector without one.
   */
  catalog?(settings: CatalogSettings): Promise<CatalogOperation[]>;
  /**
   * The problems of `catalog.documents` against the upstream's schema as this connection has it kept now (none when
   * it has none kept: nothing is read from the upstream for a write of settings).
   */
  catalogDocumentIssues?(documents: unknown): ValidationIssue[];
}

/** An upstream's schema as `GET /integrations/{id}/schema` shows it (docs/api.md). */
export type SchemaView =
  | { available: true; sdl: string; fetched_at: string }
  | { available: false; sdl: null; reason: string; fetched_at: string };

/** A connector as its own folder writes it: the request types are those its schemas describe. */
export interface ConnectorSpec<SendSchema extends ObjectSchema, ReceiveSchema extends ObjectSchema> {
  /** e.g. `graphql-1.0.0` */
  readonly id: string;
  /** JSON-schema properties of the config, secrets included (validated on PUT/PATCH). */
  readonly configProperties: Readonly<Record<string, object>>;
  /**
   * Config fields that are secrets: encrypted at rest, never shown, redacted from replies, records and logs. A dot
   * path (`auth.password`) names one inside an object.
   */
  readonly secretFields: readonly string[];
  /**
   * Config fields holding a URL the connector sends requests (and so its secrets) to. User information in them is
   * refused, and a PATCH that moves one to another origin must send the stored secrets again.
   */
  readonly urlFields: readonly string[];
  /**
   * The connector's own older ways of giving a credential (GraphQL's `token`, SOAP's `auth_header`/`auth_value`):
   * shorthands of one `auth` scheme, refused beside `auth`.
   */
  readonly authShorthands?: readonly string[];
  /** Those shorthands, when set, as the `auth` object they stand for. */
  shorthandAuth?(config: Readonly<Record<string, unknown>>): Readonly<Record<string, unknown>> | undefined;
  /** Values shown and used when a field is not set; `timeout_seconds` among them (src/integrations/settings.ts). */
  readonly defaults: CommonDefaults & Readonly<Record<string, unknown>>;
  readonly offers: readonly Operation[];
  /** JSON schemas of the request fields of send and receive (beside `operation`). */
  readonly requestSchemas: { readonly send: SendSchema; readonly receive: ReceiveSchema };
  /**
   * Binds the connector to an integration; throws integration_misconfigured when it cannot run. It sends and loads
   * nothing (the executor binds before it prepares the request, and a request refused then must cost no I/O).
   */
  connect(
    integration: ResolvedIntegration,
    context: ConnectorContext,
  ): Connection<FromSchema<SendSchema>, FromSchema<ReceiveSchema>>;
  /** The state a connector keeps, for /metrics (the SOAP connector's WSDL cache); absent when it keeps none. */
  stats?(): ConnectorStats;
  /**
   * The problems of a written `catalog.documents` (its saved operations), for a connector that has them (GraphQL);
   * absent for one that takes none.
   */
  catalogDocumentIssues?(documents: unknown): ValidationIssue[];
}

/** What a connector reports of the state it keeps (the SOAP connector: its WSDL cache), for /metrics. */
export interface ConnectorStats {
  cacheHits: number;
  cacheMisses: number;
  cacheEntries: number;
  /** What the cache holds, in bytes (GraphQL: upstream schemas, as counted against IX_GRAPHQL_SCHEMA_CACHE_MB). */
  cacheBytes?: number;
}

/** A connector as the registry, the routes and the executor see it: request fields as JSON. */
export interface ConnectorDefinition extends Omit<ConnectorSpec<ObjectSchema, ObjectSchema>, 'connect'> {
  connect(integration: ResolvedIntegration, context: ConnectorContext): Connection;
}

/**
 * A connector for the registry. Its typed fields meet untyped JSON here, once: the executor hands its connections'
 * `prepare`, `send` and `receive` only fields their request schema has validated (request-checks.ts, executor.ts),
 * which is what makes them the types `FromSchema` derives from that schema.
 */
export function defineConnector<SendSchema extends ObjectSchema, ReceiveSchema extends ObjectSchema>(
  spec: ConnectorSpec<SendSchema, ReceiveSchema>,
): ConnectorDefinition {
  return spec as unknown as ConnectorDefinition;
}
