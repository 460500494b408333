import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Executor, Tx } from './database';
import { projectReadableBy, type ProjectSubject } from './projects.repository';
import type { SessionsTable } from './tables';

export type SessionRow = Selectable<SessionsTable>;
export type SessionStatus = SessionRow['status'];
export type SessionKind = SessionRow['kind'];

/** Named queries for sessions. Access is decided by ProjectAccess on the session's Project. */
export const sessionsRepository = {
  async insertSession(db: Executor, row: Insertable<SessionsTable>): Promise<SessionRow> {
    return db.insertInto('sessions').values(row).returningAll().executeTakeFirstOrThrow();
  },

  /**
   * A session of `kind` (default `standard`): a temporary conversation's session is not a session to
   * any normal route, so it reads as missing unless asked for by its kind.
   */
  async findSession(
    db: Executor,
    id: string,
    kind: SessionKind = 'standard',
  ): Promise<SessionRow | undefined> {
    return db
      .selectFrom('sessions')
      .selectAll()
      .where('id', '=', id)
      .where('kind', '=', kind)
      .executeTakeFirst();
  },

  /**
   * The session row key-share-locked until the transaction ends: a row that references it (a binding
   * naming the session) can be inserted, and a concurrent delete waits for the transaction (or came
   * first, and then the row is not found).
   */
  async findSessionForKeyShare(tx: Tx, id: string): Promise<SessionRow | undefined> {
    return tx
      .selectFrom('sessions')
      .selectAll()
      .where('id', '=', id)
      .where('kind', '=', 'standard')
      .forKeyShare()
      .executeTakeFirst();
  },

  /**
   * The session row locked until the transaction ends, so concurrent changes of one session serialise.
   * `FOR NO KEY UPDATE`: the rows a turn inserts under the session (floors, pages, messages, variables)
   * check their foreign key with a key-share lock, which this does not block, so a session write never
   * waits for a turn that waits for it (a branch reset beside a turn deadlocked with `FOR UPDATE`). A
   * delete of the session still waits for those inserts, then removes them with it.
   */
  async findSessionForUpdate(
    tx: Tx,
    id: string,
    kind: SessionKind = 'standard',
  ): Promise<SessionRow | undefined> {
    return tx
      .selectFrom('sessions')
      .selectAll()
      .where('id', '=', id)
      .where('kind', '=', kind)
      .forNoKeyUpdate()
      .executeTakeFirst();
  },

  async updateSession(db: Executor, id: string, changes: Updateable<SessionsTable>): Promise<SessionRow> {
    return db
      .updateTable('sessions')
      .set(changes)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
  },

  async deleteSession(db: Executor, id: string): Promise<boolean> {
    const result = await db.deleteFrom('sessions').where('id', '=', id).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  },

  /**
   * The sessions a subject can read (those of every Project it owns or is a member of), newest first,
   * by offset, with the total of the same filter.
   */
  async listReadableSessions(
    db: Executor,
    query: { subject: ProjectSubject; status?: SessionStatus; limit: number; offset: number },
  ): Promise<{ rows: SessionRow[]; total: number }> {
    let base = db
      .selectFrom('sessions')
      .innerJoin('projects', 'projects.id', 'sessions.project_id')
      .where((eb) => projectReadableBy(eb, query.subject))
      .where('sessions.kind', '=', 'standard');
    if (query.status) base = base.where('sessions.status', '=', query.status);
    const [rows, count] = await Promise.all([
      base
        .selectAll('sessions')
        .orderBy('sessions.created_at', 'desc')
        .orderBy('sessions.id', 'desc')
        .limit(query.limit)
        .offset(query.offset)
        .execute(),
      base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { rows, total: Number(count.n) };
  },

  /** One page of a Project's sessions, newest first (keyset on the time-ordered id). */
  async listProjectSessions(
    db: Executor,
    query: { projectId: string; status?: SessionStatus; beforeId?: string; limit: number },
  ): Promise<SessionRow[]> {
    let q = db
      .selectFrom('sessions')
      .selectAll()
      .where('project_id', '=', query.projectId)
      .where('kind', '=', 'standard');
    if (query.status) q = q.where('status', '=', query.status);
    if (query.beforeId) q = q.where('id', '<', query.beforeId);
    return q.orderBy('id', 'desc').limit(query.limit).execute();
  },
};
