import type { Kysely } from 'kysely';

/**
 * The operation catalogue (docs/catalog.md): an integration's `catalog` settings beside its config (JSON text), and which
 * door an execution came through: `api` (the execute endpoint, async included) or `mcp` (a tool call).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('integrations')
    .addColumn('catalog', 'text', (c) => c.notNull().defaultTo('{}'))
    .execute();
  await db.schema
    .alterTable('executions')
    .addColumn('via', 'text', (c) => c.notNull().defaultTo('api'))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('executions').dropColumn('via').execute();
  await db.schema.alterTable('integrations').dropColumn('catalog').execute();
}
