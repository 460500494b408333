import type { Insertable, Selectable } from 'kysely';
import type { Executor } from './database';
import type { AccountsTable, ClientsTable, WorkspacesTable } from './tables';

export type AccountRow = Selectable<AccountsTable>;
export type ClientRow = Selectable<ClientsTable>;
export type WorkspaceRow = Selectable<WorkspacesTable>;

export const accountsRepository = {
  async insertAccount(db: Executor, row: Insertable<AccountsTable>): Promise<AccountRow> {
    return db.insertInto('accounts').values(row).returningAll().executeTakeFirstOrThrow();
  },

  async findDefaultAccount(db: Executor): Promise<AccountRow | undefined> {
    return db.selectFrom('accounts').selectAll().where('is_default', '=', true).executeTakeFirst();
  },

  async findAccount(db: Executor, id: string): Promise<AccountRow | undefined> {
    return db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
  },

  async insertClient(db: Executor, row: Insertable<ClientsTable>): Promise<ClientRow> {
    return db.insertInto('clients').values(row).returningAll().executeTakeFirstOrThrow();
  },

  async findDefaultClient(db: Executor, accountId: string): Promise<ClientRow | undefined> {
    return db
      .selectFrom('clients')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('is_default', '=', true)
      .executeTakeFirst();
  },

  async insertWorkspace(db: Executor, row: Insertable<WorkspacesTable>): Promise<WorkspaceRow> {
    return db.insertInto('workspaces').values(row).returningAll().executeTakeFirstOrThrow();
  },

  async findDefaultWorkspace(db: Executor, accountId: string): Promise<WorkspaceRow | undefined> {
    return db
      .selectFrom('workspaces')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('is_default', '=', true)
      .executeTakeFirst();
  },
};
