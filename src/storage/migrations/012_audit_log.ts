import { type Kysely, sql } from 'kysely';

/**
 * The audit log (docs/audit.md): one row per change, written in the change's own transaction; and what an execution
 * called by name.
 *
 * - `changes` is the JSON list of the field paths that changed, never a value; `actor_name` and `ip` may be null.
 * - Rows are never updated: a trigger refuses an UPDATE on both databases; only the retention sweep deletes.
 * - `webhook_deliveries.response_body`: the start of the receiver's answer, shown with the delivery.
 * - `executions.operation_name`: the SOAP method or the GraphQL operation a call named (docs/execute.md#the-executions-log).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('audit_events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('at', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('actor_type', 'text', (c) => c.notNull())
    .addColumn('actor_id', 'text', (c) => c.notNull())
    .addColumn('actor_name', 'text')
    .addColumn('ip', 'text')
    .addColumn('request_id', 'text')
    .addColumn('target_type', 'text', (c) => c.notNull())
    .addColumn('target_id', 'text', (c) => c.notNull())
    .addColumn('changes', 'text', (c) => c.notNull())
    .execute();
  // Newest first by id (ids sort by time); the retention sweep reads by `at`.
  await db.schema.createIndex('audit_events_tenant_idx').on('audit_events').columns(['tenant_id', 'id']).execute();
  await db.schema.createIndex('audit_events_at_idx').on('audit_events').column('at').execute();

  const postgres = await isPostgres(db);
  if (postgres) {
    await sql`create function audit_events_append_only() returns trigger language plpgsql as $$
      begin raise exception 'audit events are append-only'; end $$`.execute(db);
    await sql`create trigger audit_events_no_update before update on audit_events
      for each row execute function audit_events_append_only()`.execute(db);
  } else {
    await sql`create trigger audit_events_no_update before update on audit_events
      begin select raise(abort, 'audit events are append-only'); end`.execute(db);
  }

  await db.schema.alterTable('webhook_deliveries').addColumn('response_body', 'text').execute();
  await db.schema.alterTable('executions').addColumn('operation_name', 'text').execute();
}

/**
 * `version()` is PostgreSQL's and unknown to SQLite, whose failed statement leaves its transaction as it was (the
 * other way round, PostgreSQL would abort the migration's transaction).
 */
async function isPostgres(db: Kysely<unknown>): Promise<boolean> {
  return sql`select version()`.execute(db).then(
    () => true,
    () => false,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('executions').dropColumn('operation_name').execute();
  await db.schema.alterTable('webhook_deliveries').dropColumn('response_body').execute();
  await db.schema.dropTable('audit_events').execute();
  if (await isPostgres(db)) await sql`drop function if exists audit_events_append_only()`.execute(db);
}
