import type { Insertable, Selectable } from 'kysely';
import type { Executor, Tx } from './database';
import type { InboxEntriesTable } from './tables';

export type InboxEntryRow = Selectable<InboxEntriesTable>;

export interface InboxEntryListQuery {
  projectId: string;
  status?: InboxEntryRow['status'];
  kind?: string;
  sourceSessionId?: string;
  createdByAccountId?: string;
  /** Keyset: only entries with a smaller id (the list is newest first). */
  beforeId?: string;
  limit: number;
}

export interface InboxEntryDecision {
  status: 'accepted' | 'rejected';
  decision_reason: string | null;
  decided_by_account_id: string;
  decided_by_client_id: string;
  decided_at: number;
}

/** Named queries for the Project inbox (docs/decisions.md "Inbox"). */
export const inboxRepository = {
  async insert(tx: Tx, row: Insertable<InboxEntriesTable>): Promise<InboxEntryRow> {
    return tx.insertInto('inbox_entries').values(row).returningAll().executeTakeFirstOrThrow();
  },

  async findInProject(db: Executor, projectId: string, id: string): Promise<InboxEntryRow | undefined> {
    return db
      .selectFrom('inbox_entries')
      .selectAll()
      .where('project_id', '=', projectId)
      .where('id', '=', id)
      .executeTakeFirst();
  },

  /** The entry locked until the transaction ends, so two decisions on one entry serialise. */
  async findInProjectForUpdate(tx: Tx, projectId: string, id: string): Promise<InboxEntryRow | undefined> {
    return tx
      .selectFrom('inbox_entries')
      .selectAll()
      .where('project_id', '=', projectId)
      .where('id', '=', id)
      .forUpdate()
      .executeTakeFirst();
  },

  /** Records the decision; only a `pending` entry changes (undefined otherwise). */
  async decide(tx: Tx, id: string, decision: InboxEntryDecision): Promise<InboxEntryRow | undefined> {
    return tx
      .updateTable('inbox_entries')
      .set({ ...decision, updated_at: decision.decided_at })
      .where('id', '=', id)
      .where('status', '=', 'pending')
      .returningAll()
      .executeTakeFirst();
  },

  /** One page of a Project's entries, newest first, `limit` rows (ask for one more to learn if more follow). */
  async list(db: Executor, query: InboxEntryListQuery): Promise<InboxEntryRow[]> {
    let q = db.selectFrom('inbox_entries').selectAll().where('project_id', '=', query.projectId);
    if (query.status !== undefined) q = q.where('status', '=', query.status);
    if (query.kind !== undefined) q = q.where('kind', '=', query.kind);
    if (query.sourceSessionId !== undefined) q = q.where('source_session_id', '=', query.sourceSessionId);
    if (query.createdByAccountId !== undefined)
      q = q.where('created_by_account_id', '=', query.createdByAccountId);
    if (query.beforeId !== undefined) q = q.where('id', '<', query.beforeId);
    return q.orderBy('id', 'desc').limit(query.limit).execute();
  },

  /** Every entry of a Project, oldest first (tests and maintenance; the API pages through `list`). */
  async listAllOfProject(db: Executor, projectId: string): Promise<InboxEntryRow[]> {
    return db
      .selectFrom('inbox_entries')
      .selectAll()
      .where('project_id', '=', projectId)
      .orderBy('id', 'asc')
      .execute();
  },
};

/** Where a derived output lives: enough to check that an inbox entry's `derived_output_id` is of its Project. */
export interface DerivedOutputScope {
  account_id: string;
  project_id: string;
}

/** The lookups an inbox entry validates its `derived_output_id` with. */
export const inboxSourcesRepository = {
  async findDerivedOutputScope(db: Executor, id: string): Promise<DerivedOutputScope | undefined> {
    return db
      .selectFrom('derived_outputs')
      .select(['account_id', 'project_id'])
      .where('id', '=', id)
      .executeTakeFirst();
  },
};
