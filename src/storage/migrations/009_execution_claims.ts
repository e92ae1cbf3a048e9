import type { Kysely } from 'kysely';

/**
 * The token of the run that claimed an async execution: a claim whose answer was lost with its connection (storage
 * restarted between the update and its reply) is recognised by its own run when it asks again, instead of being taken
 * for a run cut short by a process that died (docs/async.md#when-storage-fails).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('executions').addColumn('claim_token', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('executions').dropColumn('claim_token').execute();
}
