import type { Kysely } from 'kysely';

/** The executions log states what the caller got: the error's message beside its code (docs/execute.md#the-executions-log). */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('executions').addColumn('error_message', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('executions').dropColumn('error_message').execute();
}
