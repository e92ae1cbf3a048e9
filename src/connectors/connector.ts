import type { FastifyBaseLogger } from 'fastify';
import type { Dispatcher } from 'undici';
import type { ValidationIssue } from '../errors.ts';
import type { ExecuteBudget } from '../transport/budget.ts';
import type { WsdlCache } from './soap/wsdl-cache.ts';

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

/** Shared outbound plumbing and caches, built once per app. */
export interface SharedConnectorContext {
  dispatcher: Dispatcher;
  upstreamMaxBytes: number;
  log: FastifyBaseLogger;
  /** Parsed WSDLs per integration (the SOAP connector's); values are opaque here. */
  wsdlCache: WsdlCache<unknown>;
}

/** What a connection runs with: the shared plumbing and this execute's own budget, which every upstream request spends. */
export interface ConnectorContext extends SharedConnectorContext {
  budget: ExecuteBudget;
}

/** An integration's settings as a connector sees them: defaults filled, secrets decrypted. */
export interface ResolvedIntegration {
  tenantId: string;
  id: string;
  version: number;
  config: Readonly<Record<string, unknown>>;
}

/** A connector bound to one integration. It knows nothing of HTTP routes. */
export interface Connection {
  send(request: Record<string, unknown>): Promise<ConnectorResult>;
  receive(request: Record<string, unknown>): Promise<ConnectorResult>;
  test(): Promise<ConnectorResult>;
  /**
   * Checks a send or receive against what the connection knows (a WSDL) without sending it; the
   * executor calls it for every part of a sync before the first part runs.
   */
  check?(operation: PrimitiveOperation, request: Record<string, unknown>): Promise<void>;
}

export interface ConnectorDefinition {
  /** e.g. `graphql-1.0.0` */
  readonly id: string;
  /** JSON-schema properties of the config, secrets included (validated on PUT/PATCH). */
  readonly configProperties: Readonly<Record<string, object>>;
  readonly secretFields: readonly string[];
  /**
   * Config fields holding a URL the connector sends requests (and so its secrets) to. User information in them is
   * refused, and a PATCH that moves one to another origin must send the stored secrets again.
   */
  readonly urlFields: readonly string[];
  /** Values shown and used when a field is not set. */
  readonly defaults: Readonly<Record<string, unknown>>;
  readonly offers: readonly Operation[];
  /** JSON schemas of the request fields of send and receive (beside `operation`). */
  readonly requestSchemas: Readonly<Record<PrimitiveOperation, object>>;
  /**
   * Checks what a schema cannot (a GraphQL document's syntax and kind) before anything is sent;
   * paths relative to the fields given.
   */
  checkRequest?(operation: PrimitiveOperation, fields: Record<string, unknown>): ValidationIssue[];
  /** Binds the connector to an integration; throws integration_misconfigured when it cannot run. */
  connect(integration: ResolvedIntegration, context: ConnectorContext): Connection;
}
