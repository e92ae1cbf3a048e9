import type { Kysely } from 'kysely';

/**
 * The round each tenant's next queued job takes, per queue: workers take jobs by round, so tenants with queued work
 * are served round robin, on one instance and across instances (docs/async.md#fair-turns, src/queue/fair-rounds.ts).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('queue_rounds')
    .addColumn('queue', 'text', (c) => c.notNull())
    .addColumn('fair_key', 'text', (c) => c.notNull())
    .addColumn('next_round', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('queue_rounds_pk', ['queue', 'fair_key'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('queue_rounds').execute();
}
