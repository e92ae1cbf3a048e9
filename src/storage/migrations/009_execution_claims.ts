import type { Kysely } from 'kysely';

/**
 * Claims that know their claimant, for a claim whose answer was lost with its connection (storage restarted between
 * the write and its reply; docs/execute.md#when-storage-fails):
 * - an async execution's: its run, asking again with its token, recognises the claim as its own instead of taking it
 *   for a run cut short by a process that died;
 * - an Idempotency-Key's: the request that may have claimed it gives it back by its token, and only its own claim.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('executions').addColumn('claim_token', 'text').execute();
  await db.schema.alterTable('idempotency_keys').addColumn('claim_token', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('idempotency_keys').dropColumn('claim_token').execute();
  await db.schema.alterTable('executions').dropColumn('claim_token').execute();
}
