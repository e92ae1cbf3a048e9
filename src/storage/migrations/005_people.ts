import { type Kysely, SqliteAdapter, sql } from 'kysely';

/**
 * People (docs/people-and-console.md): users, their role per tenant, sign-in sessions with their refresh tokens, the keys that
 * sign access tokens, and who made a key or an execution (`api_keys.created_by`, `executions.user_id`).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('users')
    .addColumn('id', 'text', (c) => c.primaryKey())
    // Stored lower-cased: unique case-insensitively on both databases without a functional index.
    .addColumn('email', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('memberships')
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('memberships_pk', ['user_id', 'tenant_id'])
    .execute();

  // One row per sign-in: the refresh-token family. Revoking it ends the session and every token descended from it.
  await db.schema
    .createTable('sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('revoked_at', 'text')
    .execute();

  await db.schema
    .createTable('refresh_tokens')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('hash', 'text', (c) => c.notNull().unique())
    .addColumn('family_id', 'text', (c) => c.notNull().references('sessions.id'))
    .addColumn('parent_id', 'text')
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('spent_at', 'text')
    .addColumn('revoked_at', 'text')
    .execute();
  await db.schema.createIndex('refresh_tokens_family_idx').on('refresh_tokens').column('family_id').execute();

  await db.schema
    .createTable('signing_keys')
    .addColumn('kid', 'text', (c) => c.primaryKey())
    .addColumn('algorithm', 'text', (c) => c.notNull())
    .addColumn('public_jwk', 'text', (c) => c.notNull())
    // PKCS#8 PEM sealed with the master key (src/secrets/cipher.ts), bound to the kid.
    .addColumn('private_key', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('retired_at', 'text')
    .execute();

  await db.schema.alterTable('api_keys').addColumn('created_by', 'text').execute();
  await allowExecutionsWithoutKey(db);
}

/**
 * `executions.api_key_id` becomes nullable (a person's execute has a user, no key) and `user_id` is added. PostgreSQL
 * drops the constraint in place; SQLite cannot, so the table is rebuilt (inside the migration's transaction).
 */
async function allowExecutionsWithoutKey(db: Kysely<unknown>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof SqliteAdapter)) {
    await sql`alter table executions alter column api_key_id drop not null`.execute(db);
    await db.schema.alterTable('executions').addColumn('user_id', 'text').execute();
    return;
  }
  const columns = [
    'id',
    'tenant_id',
    'integration_id',
    'connector',
    'operation',
    'status',
    'http_status',
    'error_code',
    'message_count',
    'duration_ms',
    'api_key_id',
    'request_id',
    'started_at',
    'error_message',
    'error_details',
  ];
  await db.schema
    .createTable('executions_new')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('integration_id', 'text', (c) => c.notNull())
    .addColumn('connector', 'text', (c) => c.notNull())
    .addColumn('operation', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('http_status', 'integer', (c) => c.notNull())
    .addColumn('error_code', 'text')
    .addColumn('message_count', 'integer', (c) => c.notNull())
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('api_key_id', 'text')
    .addColumn('request_id', 'text', (c) => c.notNull())
    .addColumn('started_at', 'text', (c) => c.notNull())
    .addColumn('error_message', 'text')
    .addColumn('error_details', 'text')
    .addColumn('user_id', 'text')
    .execute();
  const list = sql.join(columns.map((c) => sql.ref(c)));
  await sql`insert into executions_new (${list}) select ${list} from executions`.execute(db);
  await db.schema.dropTable('executions').execute();
  await db.schema.alterTable('executions_new').renameTo('executions').execute();
  await db.schema.createIndex('executions_tenant_idx').on('executions').columns(['tenant_id', 'id']).execute();
  await db.schema
    .createIndex('executions_integration_idx')
    .on('executions')
    .columns(['tenant_id', 'integration_id', 'id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('api_keys').dropColumn('created_by').execute();
  await db.schema.alterTable('executions').dropColumn('user_id').execute();
  for (const table of ['refresh_tokens', 'sessions', 'memberships', 'signing_keys', 'users']) {
    await db.schema.dropTable(table).execute();
  }
}
