import { sql, type Insertable, type Selectable, type Updateable } from 'kysely';
import type { Executor, Tx } from './database';
import type { LlmProfilesTable } from './tables';

export type LlmProfileRow = Selectable<LlmProfilesTable>;

/** Named queries for LLM profiles (spec 2, docs/decisions.md "Model profiles"). Every query is scoped by account. */
export const llmProfilesRepository = {
  async insert(db: Executor, row: Insertable<LlmProfilesTable>): Promise<LlmProfileRow> {
    return db.insertInto('llm_profiles').values(row).returningAll().executeTakeFirstOrThrow();
  },

  /**
   * A profile of the account that is not deleted (it may be `disabled`: the caller decides what that
   * means); undefined for a missing, deleted or other-account id.
   */
  async findUsableProfile(db: Executor, accountId: string, id: string): Promise<LlmProfileRow | undefined> {
    return db
      .selectFrom('llm_profiles')
      .selectAll()
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .where('status', '!=', 'deleted')
      .executeTakeFirst();
  },

  /** A profile of the account in any status (deleted included); undefined for a missing or other-account id. */
  async findForAccount(db: Executor, accountId: string, id: string): Promise<LlmProfileRow | undefined> {
    return db
      .selectFrom('llm_profiles')
      .selectAll()
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
  },

  /** Like findForAccount, with the row locked until the transaction ends (`update`) or share-locked. */
  async lockForAccount(
    tx: Tx,
    accountId: string,
    id: string,
    mode: 'update' | 'share' = 'update',
  ): Promise<LlmProfileRow | undefined> {
    const q = tx
      .selectFrom('llm_profiles')
      .selectAll()
      .where('id', '=', id)
      .where('account_id', '=', accountId);
    return (mode === 'update' ? q.forUpdate() : q.forShare()).executeTakeFirst();
  },

  /** Profiles of the account, oldest first; deleted ones only when asked, optionally one status. */
  async listForAccount(
    db: Executor,
    accountId: string,
    filter: { includeDeleted: boolean; status?: LlmProfileRow['status'] },
  ): Promise<LlmProfileRow[]> {
    let q = db.selectFrom('llm_profiles').selectAll().where('account_id', '=', accountId);
    if (filter.status) q = q.where('status', '=', filter.status);
    if (!filter.includeDeleted) q = q.where('status', '!=', 'deleted');
    return q.orderBy('created_at').orderBy('id').execute();
  },

  /** Profiles of the account by id (any status), for resolution. */
  async findByIds(db: Executor, accountId: string, ids: string[]): Promise<LlmProfileRow[]> {
    if (ids.length === 0) return [];
    return db
      .selectFrom('llm_profiles')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('id', 'in', ids)
      .execute();
  },

  /**
   * Serialises the writes that check preset-name uniqueness for one account (create, rename) until
   * the transaction ends: a transaction-level advisory lock keyed by the account.
   */
  async lockAccountNames(tx: Tx, accountId: string): Promise<void> {
    await sql`SELECT pg_advisory_xact_lock(hashtext(${`llm_profiles:${accountId}`}))`.execute(tx);
  },

  /** A non-deleted profile of the account with this preset name (names are unique among them). */
  async findByPresetName(
    db: Executor,
    accountId: string,
    presetName: string,
  ): Promise<LlmProfileRow | undefined> {
    return db
      .selectFrom('llm_profiles')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('preset_name', '=', presetName)
      .where('status', '!=', 'deleted')
      .executeTakeFirst();
  },

  async update(db: Executor, id: string, changes: Updateable<LlmProfilesTable>): Promise<LlmProfileRow> {
    return db
      .updateTable('llm_profiles')
      .set(changes)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
  },

  /** Marks a profile as used by a turn; `updated_at` is not touched (use is not a change). */
  async touchLastUsed(db: Executor, id: string, now = Date.now()): Promise<void> {
    await db.updateTable('llm_profiles').set({ last_used_at: now }).where('id', '=', id).execute();
  },

  /** Project LLM overrides whose base profile is this one (spec 1: no foreign key, checked here). */
  async countOverrides(db: Executor, id: string): Promise<number> {
    const row = await db
      .selectFrom('project_llm_profile_overrides')
      .select((eb) => eb.fn.countAll<string>().as('count'))
      .where('base_profile_id', '=', id)
      .where('status', '=', 'active')
      .executeTakeFirstOrThrow();
    return Number(row.count);
  },

  /**
   * Bumps the account's model resolution version (docs/decisions.md "Model profiles: resolution
   * cache"), in the transaction of a write to a profile, a binding or a Project LLM override: cached
   * resolutions of the account stop matching once it commits, on every API instance.
   */
  async bumpResolutionVersion(tx: Tx, accountId: string): Promise<void> {
    await bumpLlmResolutionVersion(tx, accountId);
  },

  /** Moves a profile to `active`, `disabled` or `deleted` (soft delete sets deleted_at). */
  async setStatus(
    db: Executor,
    id: string,
    status: LlmProfileRow['status'],
    now = Date.now(),
  ): Promise<void> {
    await db
      .updateTable('llm_profiles')
      .set({ status, deleted_at: status === 'deleted' ? now : null, updated_at: now })
      .where('id', '=', id)
      .execute();
  },
};

/** See `llmProfilesRepository.bumpResolutionVersion`; the row is created at version 1 by the first write. */
export async function bumpLlmResolutionVersion(tx: Tx, accountId: string): Promise<void> {
  await tx
    .insertInto('llm_resolution_versions')
    .values({ account_id: accountId, version: 1 })
    .onConflict((oc) =>
      oc.column('account_id').doUpdateSet({ version: sql<number>`llm_resolution_versions.version + 1` }),
    )
    .execute();
}
