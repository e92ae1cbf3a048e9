import type { Db } from './database.ts';
import type { RefreshTokensTable } from './schema.ts';

export type RefreshTokenRecord = RefreshTokensTable;

/** Starts a session (a refresh-token family) with its first token: in a transaction, or in the one `db` is already. */
export async function insertSession(
  db: Db,
  session: { id: string; user_id: string; created_at: string },
  first: RefreshTokenRecord,
) {
  const insert = async (tx: Db) => {
    await tx
      .insertInto('sessions')
      .values({ ...session, revoked_at: null })
      .execute();
    await tx.insertInto('refresh_tokens').values(first).execute();
  };
  await (db.isTransaction ? insert(db) : db.transaction().execute(insert));
}

/** A refresh token by hash, with whether its session is revoked. */
export async function findRefreshToken(
  db: Db,
  hash: string,
): Promise<(RefreshTokenRecord & { session_revoked_at: string | null }) | undefined> {
  return db
    .selectFrom('refresh_tokens')
    .innerJoin('sessions', 'sessions.id', 'refresh_tokens.family_id')
    .selectAll('refresh_tokens')
    .select('sessions.revoked_at as session_revoked_at')
    .where('refresh_tokens.hash', '=', hash)
    .executeTakeFirst();
}

/**
 * Marks a token spent and stores its child, in one transaction. The guard makes it happen once: a second use (a replay,
 * or two requests racing with one token) gets `false` and stores nothing.
 */
export async function spendRefreshToken(db: Db, id: string, at: string, child: RefreshTokenRecord): Promise<boolean> {
  return db.transaction().execute(async (tx) => {
    const result = await tx
      .updateTable('refresh_tokens')
      .set({ spent_at: at })
      .where('id', '=', id)
      .where('spent_at', 'is', null)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) !== 1) return false;
    await tx.insertInto('refresh_tokens').values(child).execute();
    return true;
  });
}

/** Ends a session: it and every refresh token of its family are revoked. */
export async function revokeSession(db: Db, sessionId: string, at: string): Promise<void> {
  await db.transaction().execute(async (tx) => {
    await tx
      .updateTable('sessions')
      .set({ revoked_at: at })
      .where('id', '=', sessionId)
      .where('revoked_at', 'is', null)
      .execute();
    await tx
      .updateTable('refresh_tokens')
      .set({ revoked_at: at })
      .where('family_id', '=', sessionId)
      .where('revoked_at', 'is', null)
      .execute();
  });
}
