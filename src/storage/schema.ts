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
  api_key_id: string;
  request_id: string;
  started_at: string;
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
}

export interface Database {
  tenants: TenantsTable;
  api_keys: ApiKeysTable;
  api_key_usage_daily: ApiKeyUsageDailyTable;
  entities: EntitiesTable;
  integrations: IntegrationsTable;
  executions: ExecutionsTable;
  idempotency_keys: IdempotencyKeysTable;
}
