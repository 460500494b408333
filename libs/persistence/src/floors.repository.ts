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

  async findFloorOfAccount(db: Executor, accountId: string, floorId: string): Promise<FloorRow | undefined> {
    return db
      .selectFrom('floors')
      .selectAll()
      .where('id', '=', floorId)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
  },

  async findPage(db: Executor, pageId: string): Promise<PageRow | undefined> {
    return db.selectFrom('pages').selectAll().where('id', '=', pageId).executeTakeFirst();
  },
};
