import type { Kysely } from 'kysely';

// Only types and constraints that SQLite and PostgreSQL read alike: text, integer, bigint.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('tenants')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('lineage_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('hash', 'text', (c) => c.notNull().unique())
    .addColumn('prefix', 'text', (c) => c.notNull())
    .addColumn('start', 'text', (c) => c.notNull())
    .addColumn('last4', 'text', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text')
    .addColumn('rate_limit_per_minute', 'integer', (c) => c.notNull())
    .addColumn('legacy', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('revoked_at', 'text')
    .addColumn('rotated_to', 'text')
    .addColumn('last_used_at', 'text')
    .addColumn('last_used_ip', 'text')
    .addColumn('request_count', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex('api_keys_tenant_idx').on('api_keys').columns(['tenant_id', 'id']).execute();

  await db.schema
    .createTable('api_key_usage_daily')
    .addColumn('key_id', 'text', (c) => c.notNull().references('api_keys.id'))
    .addColumn('date', 'text', (c) => c.notNull())
    .addColumn('requests', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('errors', 'bigint', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('api_key_usage_daily_pk', ['key_id', 'date'])
    .execute();

  await db.schema
    .createTable('entities')
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('entity_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('entities_pk', ['tenant_id', 'entity_id'])
    .execute();
  await db.schema.createIndex('entities_status_idx').on('entities').columns(['tenant_id', 'status', 'entity_id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['entities', 'api_key_usage_daily', 'api_keys', 'tenants']) {
    await db.schema.dropTable(table).execute();
  }
}
