import type { Kysely } from 'kysely';

/** A failed execution keeps the error's `details` beside its code and message (JSON text), as the caller got them. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('executions').addColumn('error_details', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('executions').dropColumn('error_details').execute();
}
