import { type Kysely, sql } from 'kysely';

/**
 * Upstream failures are retried (docs/resilience.md), so an execution's `attempts` now counts its tries of the
 * upstream: the first and every retry. The runs an async execution's queue began (more than one when a run was cut
 * short by its process dying), which `attempts` counted until now, move to `runs`: the claim of a run compares them.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('executions')
    .addColumn('runs', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await sql`update executions set runs = attempts where mode = 'async'`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`update executions set attempts = runs where mode = 'async'`.execute(db);
  await db.schema.alterTable('executions').dropColumn('runs').execute();
}
