import { type Kysely, sql } from 'kysely';

/**
 * Executions accepted with `Prefer: respond-async` (docs/async.md): the mode, the runs begun (`attempts`), when it
 * finished, and the answer the synchronous call would have given (`result`, JSON text, secrets redacted), kept until
 * `result_expires_at`. A synchronous execution has `mode: 'sync'`, one attempt and no result.
 *
 * The partial index holds only the executions not yet finished (queued, running): the queue's depth and the age of
 * the oldest are read from it, however long the table.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('executions')
    .addColumn('mode', 'text', (c) => c.notNull().defaultTo('sync'))
    .execute();
  await db.schema
    .alterTable('executions')
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(1))
    .execute();
  await db.schema.alterTable('executions').addColumn('finished_at', 'text').execute();
  await db.schema.alterTable('executions').addColumn('result', 'text').execute();
  await db.schema.alterTable('executions').addColumn('result_expires_at', 'text').execute();
  await db.schema
    .createIndex('executions_unfinished_idx')
    .on('executions')
    .columns(['status', 'started_at'])
    .where(sql.ref('status'), 'in', ['queued', 'running'])
    .execute();
  await db.schema
    .createIndex('executions_result_expiry_idx')
    .on('executions')
    .column('result_expires_at')
    .where(sql.ref('result_expires_at'), 'is not', null)
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('executions_result_expiry_idx').execute();
  await db.schema.dropIndex('executions_unfinished_idx').execute();
  for (const column of ['result_expires_at', 'result', 'finished_at', 'attempts', 'mode']) {
    await db.schema.alterTable('executions').dropColumn(column).execute();
  }
}
