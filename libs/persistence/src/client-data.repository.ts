import { sql, type Insertable, type Selectable, type Updateable } from 'kysely';
import type { Executor, Tx } from './database';
import type { ClientDataNamespacesTable, SessionStateMutationsTable } from './tables';
import type { LineRange } from './transcript.repository';

export type ClientDataNamespaceRow = Selectable<ClientDataNamespacesTable>;
export type SessionStateMutationRow = Selectable<SessionStateMutationsTable>;

/** A slot's newest write on a lineage, with the floor number it was written at. */
export interface SessionStateSlotRow extends SessionStateMutationRow {
  floor_no: number;
}

/** Named queries of client data (docs/decisions.md "Client data and session state"). */
export const clientDataRepository = {
  async insertNamespace(tx: Tx, row: Insertable<ClientDataNamespacesTable>): Promise<ClientDataNamespaceRow> {
    return tx.insertInto('client_data_namespaces').values(row).returningAll().executeTakeFirstOrThrow();
  },

  async findNamespace(
    db: Executor,
    accountId: string,
    name: string,
  ): Promise<ClientDataNamespaceRow | undefined> {
    return db
      .selectFrom('client_data_namespaces')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('name', '=', name)
      .executeTakeFirst();
  },

  /** The namespace locked until the transaction ends (`update` to change or delete it, `share` to write in it). */
  async lockNamespace(
    tx: Tx,
    accountId: string,
    name: string,
    mode: 'update' | 'share',
  ): Promise<ClientDataNamespaceRow | undefined> {
    const q = tx
      .selectFrom('client_data_namespaces')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('name', '=', name);
    return (mode === 'update' ? q.forUpdate() : q.forShare()).executeTakeFirst();
  },

  async findNamespaces(db: Executor, accountId: string, names: string[]): Promise<ClientDataNamespaceRow[]> {
    if (names.length === 0) return [];
    return db
      .selectFrom('client_data_namespaces')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('name', 'in', names)
      .execute();
  },

  async countNamespaces(db: Executor, accountId: string): Promise<number> {
    const row = await db
      .selectFrom('client_data_namespaces')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('account_id', '=', accountId)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  },

  async listNamespaces(db: Executor, accountId: string): Promise<ClientDataNamespaceRow[]> {
    return db
      .selectFrom('client_data_namespaces')
      .selectAll()
      .where('account_id', '=', accountId)
      .orderBy('name', 'asc')
      .execute();
  },

  async updateNamespace(
    tx: Tx,
    id: string,
    changes: Updateable<ClientDataNamespacesTable>,
  ): Promise<ClientDataNamespaceRow> {
    return tx
      .updateTable('client_data_namespaces')
      .set(changes)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
  },

  /** Deletes the namespace and every write made in it; answers how many writes went with it. */
  async deleteNamespace(tx: Tx, id: string): Promise<number> {
    const counted = await tx
      .selectFrom('session_state_mutations')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('namespace_id', '=', id)
      .executeTakeFirstOrThrow();
    await tx.deleteFrom('client_data_namespaces').where('id', '=', id).execute();
    return Number(counted.n);
  },

  /** How many writes and sessions a namespace holds (its view's `usage`). */
  async namespaceUsage(
    db: Executor,
    id: string,
  ): Promise<{ writes: number; sessions: number; bytes: number }> {
    const row = await db
      .selectFrom('session_state_mutations')
      .select([
        (eb) => eb.fn.countAll<number>().as('writes'),
        sql<number>`count(DISTINCT session_id)`.as('sessions'),
        sql<number>`coalesce(sum(value_bytes), 0)`.as('bytes'),
      ])
      .where('namespace_id', '=', id)
      .executeTakeFirstOrThrow();
    return { writes: Number(row.writes), sessions: Number(row.sessions), bytes: Number(row.bytes) };
  },

  async insertMutations(
    tx: Tx,
    rows: Insertable<SessionStateMutationsTable>[],
  ): Promise<SessionStateMutationRow[]> {
    if (rows.length === 0) return [];
    return tx.insertInto('session_state_mutations').values(rows).returningAll().execute();
  },

  /** Every session state write of an account's standard sessions (a backup's), by session, floor, seq. */
  async writesOfAccount(db: Executor, accountId: string): Promise<SessionStateMutationRow[]> {
    return db
      .selectFrom('session_state_mutations as m')
      .innerJoin('sessions as s', 's.id', 'm.session_id')
      .selectAll('m')
      .where('m.account_id', '=', accountId)
      .where('s.kind', '=', 'standard')
      .orderBy('m.session_id')
      .orderBy('m.floor_id')
      .orderBy('m.seq')
      .execute();
  },

  /**
   * The writes a floor's turn landed, in request order, each with its namespace's current replay policy
   * (a retry's check, the floor's write list).
   */
  async landedWritesOfFloor(
    db: Executor,
    floorId: string,
  ): Promise<Array<SessionStateMutationRow & { replay_policy: 'replay' | 'confirm' | 'block' }>> {
    return db
      .selectFrom('session_state_mutations as m')
      .innerJoin('client_data_namespaces as n', 'n.id', 'm.namespace_id')
      .selectAll('m')
      .select('n.replay_policy')
      .where('m.floor_id', '=', floorId)
      .orderBy('m.seq', 'asc')
      .execute();
  },

  /**
   * For each (namespace, slot), the newest write on the lineage given as line ranges (the higher floor,
   * then the later write of that floor), deletes included (`present` false). Optionally only in the
   * given namespaces. Sorted by namespace name, then slot.
   */
  async slotsOnLineage(
    db: Executor,
    sessionId: string,
    ranges: LineRange[],
    namespaceIds: string[] | null = null,
  ): Promise<SessionStateSlotRow[]> {
    if (ranges.length === 0 || (namespaceIds !== null && namespaceIds.length === 0)) return [];
    const onLineage = sql.join(
      ranges.map((r) => sql`(f.line_id = ${r.line_id} AND f.floor_no BETWEEN ${r.lo} AND ${r.hi})`),
      sql` OR `,
    );
    const inNamespaces =
      namespaceIds === null ? sql`` : sql`AND m.namespace_id IN (${sql.join(namespaceIds)})`;
    const result = await sql<SessionStateSlotRow>`
      SELECT * FROM (
        SELECT DISTINCT ON (m.namespace_id, m.slot) m.*, f.floor_no
        FROM session_state_mutations m JOIN floors f ON f.id = m.floor_id
        WHERE m.session_id = ${sessionId} ${inNamespaces} AND (${onLineage})
        ORDER BY m.namespace_id, m.slot, f.floor_no DESC, m.seq DESC
      ) newest
      ORDER BY namespace, slot
    `.execute(db);
    return result.rows.map((r) => ({ ...r, floor_no: Number(r.floor_no) }));
  },

  /** The account's usage row, created when missing and locked until the transaction ends. */
  async lockUsage(tx: Tx, accountId: string): Promise<{ items: number; bytes: number }> {
    await tx
      .insertInto('client_data_usage')
      .values({ account_id: accountId, items: 0, bytes: 0 })
      .onConflict((oc) => oc.column('account_id').doNothing())
      .execute();
    const row = await tx
      .selectFrom('client_data_usage')
      .select(['items', 'bytes'])
      .where('account_id', '=', accountId)
      .forUpdate()
      .executeTakeFirstOrThrow();
    return { items: Number(row.items), bytes: Number(row.bytes) };
  },

  async usage(db: Executor, accountId: string): Promise<{ items: number; bytes: number }> {
    const row = await db
      .selectFrom('client_data_usage')
      .select(['items', 'bytes'])
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    return { items: Number(row?.items ?? 0), bytes: Number(row?.bytes ?? 0) };
  },
};
