import type { ColumnType } from 'kysely';

/** Row types as stored. Timestamps are RFC 3339 UTC text, booleans 0/1, lists JSON text: the same on SQLite and PostgreSQL. */
export interface TenantsTable {
  id: string;
  name: string;
  type: string;
  created_at: string;
}

export interface ApiKeysTable {
  id: string;
  tenant_id: string;
  lineage_id: string;
  name: string;
  hash: string;
  prefix: string;
  start: string;
  last4: string;
  scopes: string;
  expires_at: string | null;
  rate_limit_per_minute: number;
  legacy: number;
  created_at: string;
  revoked_at: string | null;
  rotated_to: string | null;
  last_used_at: string | null;
  last_used_ip: string | null;
  request_count: number | string;
  /** The user who created the key through the API; null for keys made with a key or the CLI. */
  created_by: string | null;
}

export interface ApiKeyUsageDailyTable {
  key_id: string;
  date: string;
  requests: number | string;
  errors: number | string;
}

export interface EntitiesTable {
  tenant_id: string;
  entity_id: string;
  name: string;
  status: string;
  created_at: string;
  updated_at: string;
}

export interface IntegrationsTable {
  tenant_id: string;
  id: string;
  name: string;
  connector: string;
  config: string;
  secrets: string;
  /** The operation catalogue's settings (docs/catalog.md), JSON text; `{}` when none are set. */
  catalog: string;
  version: number;
  created_at: string;
  updated_at: string;
}

export interface ExecutionsTable {
  id: string;
  tenant_id: string;
  integration_id: string;
  connector: string;
  operation: string;
  status: string;
  http_status: number;
  error_code: string | null;
  /** The message the caller got, secrets redacted; null for a success. */
  error_message: string | null;
  /** A failure's `details` as the caller got them (JSON text, secrets redacted); null for a success or none. */
  error_details: string | null;
  message_count: number;
  duration_ms: number;
  /** The key that called; null when a person (`user_id`) did. */
  api_key_id: string | null;
  /** The signed-in person who called; null for an API key's call. */
  user_id: string | null;
  request_id: string;
  started_at: string;
  /** The SOAP method or GraphQL operation the call named (src/execution/operation-name.ts); null when it named none. */
  operation_name: string | null;
  /** `sync`, or `async` for one accepted with `Prefer: respond-async`. */
  mode: string;
  /** `api` (the execute endpoint) or `mcp` (an MCP tool call). */
  via: string;
  /** Tries of the upstream: the first and every retry (docs/resilience.md); 0 while queued. */
  attempts: number;
  /** An async execution's runs begun: more than 1 when a run was cut short by its process dying; 0 for a synchronous call. */
  runs: number;
  /** The token of the run that claimed it last (an async execution's); null before any. */
  claim_token: string | null;
  finished_at: string | null;
  /** An async execution's answer, as the synchronous call would have sent it (JSON text, secrets redacted). */
  result: string | null;
  /** When `result` is dropped (IX_RESULT_RETENTION_HOURS after it finished). */
  result_expires_at: string | null;
}

export interface IdempotencyKeysTable {
  tenant_id: string;
  key: string;
  fingerprint: string;
  state: string;
  http_status: number | null;
  response: string | null;
  created_at: string;
  expires_at: string;
  /** The claiming request's token: only it gives the claim back. */
  claim_token: string | null;
}

export interface UsersTable {
  id: string;
  /** Lower-cased: unique case-insensitively. */
  email: string;
  name: string;
  /** `scrypt$N$r$p$salt$hash` (src/auth/passwords.ts). */
  password_hash: string;
  created_at: string;
}

export interface MembershipsTable {
  user_id: string;
  tenant_id: string;
  role: string;
  created_at: string;
}

/** One sign-in: the family of refresh tokens descended from it. */
export interface SessionsTable {
  id: string;
  user_id: string;
  created_at: string;
  revoked_at: string | null;
}

export interface RefreshTokensTable {
  id: string;
  /** SHA-256 of the token; the token itself is never stored. */
  hash: string;
  family_id: string;
  parent_id: string | null;
  user_id: string;
  created_at: string;
  expires_at: string;
  spent_at: string | null;
  revoked_at: string | null;
}

export interface SigningKeysTable {
  kid: string;
  algorithm: string;
  /** The public JWK as JSON text. */
  public_jwk: string;
  /** PKCS#8 PEM encrypted with the master key. */
  private_key: string;
  created_at: string;
  retired_at: string | null;
}

/** A webhook endpoint (docs/async.md#webhooks). */
export interface WebhooksTable {
  id: string;
  tenant_id: string;
  url: string;
  /** The event types it wants, JSON text; `["*"]` for all. */
  events: string;
  description: string | null;
  /** `whsec_…`, sealed with the master key. */
  secret: string;
  /** The secret before the last rotation, sealed; it also signs until `previous_secret_expires_at`. */
  previous_secret: string | null;
  previous_secret_expires_at: string | null;
  disabled: number;
  /** When its current run of failed attempts began; null while deliveries succeed. */
  failing_since: string | null;
  created_at: string;
  updated_at: string;
}

/** An event as sent: the body (JSON text) fixed when it happened. */
export interface WebhookEventsTable {
  id: string;
  tenant_id: string;
  type: string;
  payload: string;
  created_at: string;
}

/** One delivery attempt of one event to one endpoint. */
export interface WebhookDeliveriesTable {
  id: string;
  webhook_id: string;
  tenant_id: string;
  event_id: string;
  event_type: string;
  attempt: number;
  /** The receiver's status; 0 when none came. */
  http_status: number;
  duration_ms: number;
  error: string | null;
  next_attempt_at: string | null;
  created_at: string;
  /** The start of the receiver's answer (docs/limits.md#webhooks); null when none came. */
  response_body: ColumnType<string | null, string | null | undefined, string | null>;
}

/** One change, who made it and from where (docs/audit.md); never updated. */
export interface AuditEventsTable {
  id: string;
  tenant_id: string;
  at: string;
  action: string;
  actor_type: string;
  actor_id: string;
  actor_name: string | null;
  ip: string | null;
  request_id: string | null;
  target_type: string;
  target_id: string;
  /** The changed field paths, JSON text. */
  changes: string;
}

/** The round a tenant's next job of a queue takes (src/queue/fair-rounds.ts). */
export interface QueueRoundsTable {
  queue: string;
  fair_key: string;
  next_round: number;
}

export interface Database {
  tenants: TenantsTable;
  api_keys: ApiKeysTable;
  api_key_usage_daily: ApiKeyUsageDailyTable;
  entities: EntitiesTable;
  integrations: IntegrationsTable;
  executions: ExecutionsTable;
  idempotency_keys: IdempotencyKeysTable;
  users: UsersTable;
  memberships: MembershipsTable;
  sessions: SessionsTable;
  refresh_tokens: RefreshTokensTable;
  signing_keys: SigningKeysTable;
  webhooks: WebhooksTable;
  webhook_events: WebhookEventsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  queue_rounds: QueueRoundsTable;
  audit_events: AuditEventsTable;
}
