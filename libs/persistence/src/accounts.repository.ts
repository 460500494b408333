import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Executor, Tx } from './database';
import type { AccountsTable, ClientsTable, WorkspacesTable } from './tables';

export type AccountRow = Selectable<AccountsTable>;
export type ClientRow = Selectable<ClientsTable>;
export type WorkspaceRow = Selectable<WorkspacesTable>;

/**
 * What an account still owns that blocks its hard delete, by kind. Later issues add their assets
 * (characters, presets, worldbooks, user cards, ...) as new keys of this one query, so the delete
 * rule stays in one place. Clients, keys and the default Workspace are part of the account itself and
 * are removed with it.
 */
export interface OwnedResourceCounts {
  sessions: number;
  projects: number;
  llm_profiles: number;
  mcp_servers: number;
  tool_policies: number;
  characters: number;
  presets: number;
  regex_profiles: number;
  worldbooks: number;
  user_cards: number;
  vc_tags: number;
}

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

  /**
   * The account row key-share-locked until the transaction ends: rows that reference it (a Client, a
   * key of its Client) can be inserted, and a concurrent account delete (which locks the row for
   * update) waits for the transaction, or came first and the account is not found.
   */
  async findAccountForKeyShare(tx: Tx, id: string): Promise<AccountRow | undefined> {
    return tx.selectFrom('accounts').selectAll().where('id', '=', id).forKeyShare().executeTakeFirst();
  },

  /** Accounts in creation order (the default account first), one page. */
  async listAccounts(db: Executor, page: { limit: number; offset: number }): Promise<AccountRow[]> {
    return db
      .selectFrom('accounts')
      .selectAll()
      .orderBy('created_at', 'asc')
      .orderBy('id', 'asc')
      .limit(page.limit)
      .offset(page.offset)
      .execute();
  },

  async countAccounts(db: Executor): Promise<number> {
    const row = await db
      .selectFrom('accounts')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  },

  /**
   * Locks the account row until the transaction ends. A row that references the account (a new
   * session or Project) cannot be inserted meanwhile, so a count taken after this lock stays true
   * until the delete commits.
   */
  async findAccountForUpdate(tx: Tx, id: string): Promise<AccountRow | undefined> {
    return tx.selectFrom('accounts').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
  },

  async updateAccount(
    db: Executor,
    id: string,
    patch: Pick<Updateable<AccountsTable>, 'name' | 'role' | 'status'> & { updated_at: number },
  ): Promise<AccountRow | undefined> {
    return db.updateTable('accounts').set(patch).where('id', '=', id).returningAll().executeTakeFirst();
  },

  /** Hard delete; Clients, their keys and the Workspaces go with it (ON DELETE CASCADE). */
  async deleteAccount(db: Executor, id: string): Promise<boolean> {
    const result = await db.deleteFrom('accounts').where('id', '=', id).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  },

  /** See OwnedResourceCounts: the one place that decides what blocks an account's delete. */
  async countOwnedResources(db: Executor, accountId: string): Promise<OwnedResourceCounts> {
    const row = await db
      .selectNoFrom((eb) => [
        eb
          .selectFrom('sessions')
          .select((s) => s.fn.countAll<number>().as('n'))
          .where('account_id', '=', accountId)
          .as('sessions'),
        eb
          .selectFrom('projects')
          .select((s) => s.fn.countAll<number>().as('n'))
          .where('account_id', '=', accountId)
          .as('projects'),
        eb
          .selectFrom('llm_profiles')
          .select((s) => s.fn.countAll<number>().as('n'))
          .where('account_id', '=', accountId)
          .where('status', '!=', 'deleted')
          .as('llm_profiles'),
        eb
          .selectFrom('mcp_servers')
          .select((s) => s.fn.countAll<number>().as('n'))
          .where('account_id', '=', accountId)
          .as('mcp_servers'),
        eb
          .selectFrom('tool_policies')
          .select((s) => s.fn.countAll<number>().as('n'))
          .where('account_id', '=', accountId)
          .as('tool_policies'),
        // Library assets: soft-deleted ones no longer count; worldbooks and tags are hard-deleted.
        eb
          .selectFrom('characters')
          .select((s) => s.fn.countAll<number>().as('n'))
          .where('account_id', '=', accountId)
          .where('deleted_at', 'is', null)
          .as('characters'),
        eb
          .selectFrom('presets')
          .select((s) => s.fn.countAll<number>().as('n'))
          .where('account_id', '=', accountId)
          .where('deleted_at', 'is', null)
          .as('presets'),
        eb
          .selectFrom('regex_profiles')
          .select((s) => s.fn.countAll<number>().as('n'))
          .where('account_id', '=', accountId)
          .where('deleted_at', 'is', null)
          .as('regex_profiles'),
        eb
          .selectFrom('worldbooks')
          .select((s) => s.fn.countAll<number>().as('n'))
          .where('account_id', '=', accountId)
          .as('worldbooks'),
        eb
          .selectFrom('user_cards')
          .select((s) => s.fn.countAll<number>().as('n'))
          .where('account_id', '=', accountId)
          .where('deleted_at', 'is', null)
          .as('user_cards'),
        eb
          .selectFrom('vc_tags')
          .select((s) => s.fn.countAll<number>().as('n'))
          .where('account_id', '=', accountId)
          .as('vc_tags'),
      ])
      .executeTakeFirstOrThrow();
    return {
      sessions: Number(row.sessions),
      projects: Number(row.projects),
      llm_profiles: Number(row.llm_profiles),
      mcp_servers: Number(row.mcp_servers),
      tool_policies: Number(row.tool_policies),
      characters: Number(row.characters),
      presets: Number(row.presets),
      regex_profiles: Number(row.regex_profiles),
      worldbooks: Number(row.worldbooks),
      user_cards: Number(row.user_cards),
      vc_tags: Number(row.vc_tags),
    };
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
