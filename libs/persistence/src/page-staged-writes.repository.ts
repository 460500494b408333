import type { Insertable, Selectable } from 'kysely';
import type { Executor, Tx } from './database';
import type { PageStagedWritesTable } from './tables';

export type PageStagedWriteRow = Selectable<PageStagedWritesTable>;

/** Page candidates (target `page_staged_write`): exports of temporary conversations and agent deliveries. */
export const pageStagedWritesRepository = {
  async insert(tx: Tx, row: Insertable<PageStagedWritesTable>): Promise<PageStagedWriteRow> {
    return tx.insertInto('page_staged_writes').values(row).returningAll().executeTakeFirstOrThrow();
  },

  /** The candidates of a page, oldest first. */
  async listOfPage(db: Executor, pageId: string): Promise<PageStagedWriteRow[]> {
    return db
      .selectFrom('page_staged_writes')
      .selectAll()
      .where('target_page_id', '=', pageId)
      .orderBy('created_at', 'asc')
      .orderBy('id', 'asc')
      .execute();
  },

  /** The candidate an Agent Job wrote (at most one: unique index). */
  async findOfJob(db: Executor, jobId: string): Promise<PageStagedWriteRow | undefined> {
    return db
      .selectFrom('page_staged_writes')
      .selectAll()
      .where('source_job_id', '=', jobId)
      .executeTakeFirst();
  },

  /** The active reply page (output or greeting) of a committed floor, where a candidate for it goes. */
  async activeOutputPageOfFloor(db: Executor, floorId: string): Promise<{ id: string } | undefined> {
    return db
      .selectFrom('pages')
      .innerJoin('floors', 'floors.id', 'pages.floor_id')
      .select('pages.id')
      .where('pages.floor_id', '=', floorId)
      .where('pages.page_kind', 'in', ['output', 'greeting'])
      .where('pages.is_active', '=', true)
      .where('floors.state', '=', 'committed')
      .executeTakeFirst();
  },
};
