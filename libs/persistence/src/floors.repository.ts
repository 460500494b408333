import type { Selectable } from 'kysely';
import type { Executor } from './database';
import type { FloorsTable, PagesTable } from './tables';

export type FloorRow = Selectable<FloorsTable>;
export type PageRow = Selectable<PagesTable>;

/** Lookups of floors and pages by id, for features that reference them (tags, derived outputs, inbox). */
export const floorsRepository = {
  async findFloor(db: Executor, floorId: string): Promise<FloorRow | undefined> {
    return db.selectFrom('floors').selectAll().where('id', '=', floorId).executeTakeFirst();
  },

  /** The branch of each of the floors (floor id → branch id). */
  async branchesOfFloors(db: Executor, floorIds: string[]): Promise<Map<string, string>> {
    if (floorIds.length === 0) return new Map();
    const rows = await db
      .selectFrom('floors')
      .select(['id', 'branch_id'])
      .where('id', 'in', floorIds)
      .execute();
    return new Map(rows.map((row) => [row.id, row.branch_id]));
  },

  /** A floor of the account in a standard session (a temporary conversation's floors read as missing). */
  async findFloorOfAccount(db: Executor, accountId: string, floorId: string): Promise<FloorRow | undefined> {
    return db
      .selectFrom('floors')
      .innerJoin('sessions', 'sessions.id', 'floors.session_id')
      .selectAll('floors')
      .where('floors.id', '=', floorId)
      .where('floors.account_id', '=', accountId)
      .where('sessions.kind', '=', 'standard')
      .executeTakeFirst();
  },

  async findPage(db: Executor, pageId: string): Promise<PageRow | undefined> {
    return db.selectFrom('pages').selectAll().where('id', '=', pageId).executeTakeFirst();
  },
};
