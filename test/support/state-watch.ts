import { sql } from 'kysely';
import type { Storage } from '../../src/storage/database.ts';

/**
 * Watches the stored state a refused request must leave alone, cheaply enough to check every write of a property
 * test. Test-only triggers count the row writes of each table; a table's rows are read again only when its count
 * moved, and a moved count is compared row by row (so a claim that was given back, insert then delete, is no change).
 *
 * Not watched, on purpose: `api_key_usage_daily` and the usage columns of `api_keys` (`request_count`,
 * `last_used_*`), which count every authenticated request and are written in batches in the background.
 * `executions` is counted, not read: it only grows, one row per execute call.
 */
export const watchedTables = ['tenants', 'api_keys', 'entities', 'integrations', 'idempotency_keys'] as const;
export type WatchedTable = (typeof watchedTables)[number];
type Counted = WatchedTable | 'executions';
const counted: readonly Counted[] = [...watchedTables, 'executions'];

const keyColumns: Record<WatchedTable, string[]> = {
  tenants: ['id'],
  api_keys: ['id'],
  entities: ['tenant_id', 'entity_id'],
  integrations: ['tenant_id', 'id'],
  idempotency_keys: ['tenant_id', 'key'],
};
const usageColumns = new Set(['request_count', 'last_used_at', 'last_used_ip']);

export interface Mark {
  writes: Record<Counted, number>;
  rows: Record<WatchedTable, string[]>;
}

export interface Changes {
  /** Rows only before (removed or changed) and only after (added or changed), per table whose rows differ. */
  tables: Partial<Record<WatchedTable, { removed: string[]; added: string[] }>>;
  /** Row writes to `executions`. */
  executions: number;
}

export class StateWatch {
  readonly #storage: Storage;
  readonly #cache = new Map<WatchedTable, { writes: number; rows: string[] }>();
  #apiKeyColumns: string[] = [];

  private constructor(storage: Storage) {
    this.#storage = storage;
  }

  /** Installs the counting triggers in the (migrated) test database. */
  static async install(storage: Storage): Promise<StateWatch> {
    const watch = new StateWatch(storage);
    const db = storage.db;
    const apiKeyColumns =
      storage.kind === 'sqlite'
        ? (await sql<{ name: string }>`select name from pragma_table_info('api_keys')`.execute(db)).rows.map((r) => r.name)
        : (
            await sql<{ name: string }>`select column_name as name from information_schema.columns
              where table_name = 'api_keys' and table_schema = current_schema()`.execute(db)
          ).rows.map((r) => r.name);
    watch.#apiKeyColumns = apiKeyColumns.filter((c) => !usageColumns.has(c));
    const updateOf = (table: Counted) => (table === 'api_keys' ? ` of ${watch.#apiKeyColumns.join(', ')}` : '');
    await sql`create table ix_test_writes (tbl text primary key, n integer not null)`.execute(db);
    for (const table of counted) await sql`insert into ix_test_writes values (${table}, 0)`.execute(db);
    if (storage.kind === 'sqlite') {
      for (const table of counted) {
        for (const event of ['insert', 'delete', `update${updateOf(table)}`]) {
          const name = `ix_test_${table}_${event.split(' ')[0]}`;
          await sql
            .raw(
              `create trigger ${name} after ${event} on ${table} begin update ix_test_writes set n = n + 1 where tbl = '${table}'; end`,
            )
            .execute(db);
        }
      }
    } else {
      await sql
        .raw(`create function ix_test_count() returns trigger language plpgsql as $$
          begin update ix_test_writes set n = n + 1 where tbl = tg_table_name; return null; end $$`)
        .execute(db);
      for (const table of counted) {
        await sql
          .raw(
            `create trigger ix_test_${table} after insert or delete or update${updateOf(table)} on ${table} for each row execute function ix_test_count()`,
          )
          .execute(db);
      }
    }
    return watch;
  }

  async #writes(): Promise<Record<Counted, number>> {
    const { rows } = await sql<{ tbl: Counted; n: number | string }>`select tbl, n from ix_test_writes`.execute(this.#storage.db);
    return Object.fromEntries(rows.map((r) => [r.tbl, Number(r.n)])) as Record<Counted, number>;
  }

  async #rows(table: WatchedTable): Promise<string[]> {
    const columns = table === 'api_keys' ? this.#apiKeyColumns : ['*'];
    const order = keyColumns[table].join(', ');
    const { rows } = await sql<
      Record<string, unknown>
    >`select ${sql.raw(columns.join(', '))} from ${sql.table(table)} order by ${sql.raw(order)}`.execute(this.#storage.db);
    return rows.map((row) => JSON.stringify(row));
  }

  /** The state now: write counts, and every table's rows as of them (read again only for tables written since). */
  async mark(): Promise<Mark> {
    const writes = await this.#writes();
    const rows = {} as Record<WatchedTable, string[]>;
    for (const table of watchedTables) {
      let cached = this.#cache.get(table);
      if (cached?.writes !== writes[table]) {
        cached = { writes: writes[table], rows: await this.#rows(table) };
        this.#cache.set(table, cached);
      }
      rows[table] = cached.rows;
    }
    return { writes, rows };
  }

  /** What changed since `mark`. */
  async changesSince(mark: Mark): Promise<Changes> {
    const now = await this.mark();
    const tables: Changes['tables'] = {};
    for (const table of watchedTables) {
      if (now.writes[table] === mark.writes[table]) continue;
      const was = new Set(mark.rows[table]);
      const is = new Set(now.rows[table]);
      const removed = mark.rows[table].filter((row) => !is.has(row));
      const added = now.rows[table].filter((row) => !was.has(row));
      if (removed.length > 0 || added.length > 0) tables[table] = { removed, added };
    }
    return { tables, executions: now.writes.executions - mark.writes.executions };
  }
}
