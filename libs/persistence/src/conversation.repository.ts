import { sql, type Insertable, type Selectable } from 'kysely';
import type { Executor, Tx } from './database';
import type { FloorRow, PageRow } from './floors.repository';
import type { BranchesTable, FloorLinesTable, MessagesTable, PagesTable } from './tables';

export type BranchRow = Selectable<BranchesTable>;
export type FloorLineRow = Selectable<FloorLinesTable>;
export type MessageRow = Selectable<MessagesTable>;

/** A branch with the floor_no of its head (null while it has no floor). */
export interface BranchWithHead extends BranchRow {
  head_floor_no: number | null;
}

/** A new floor: everything but the line, which `insertFloor` chooses. */
export type NewFloor = Omit<
  Insertable<import('./tables').FloorsTable>,
  'line_id' | 'floor_no' | 'parent_floor_id'
>;

const BRANCH_WITH_HEAD = [
  'b.id',
  'b.account_id',
  'b.session_id',
  'b.name',
  'b.source_floor_id',
  'b.head_floor_id',
  'b.created_at',
  'b.updated_at',
  'h.floor_no as head_floor_no',
] as const;

/**
 * Named writes and reads of branches, floor lines, floors, pages and messages (issue 5 item 1). The
 * transcript reads are in `transcriptRepository`.
 */
export const conversationRepository = {
  async findBranchOfSession(
    db: Executor,
    sessionId: string,
    branchId: string,
  ): Promise<BranchRow | undefined> {
    return db
      .selectFrom('branches')
      .selectAll()
      .where('id', '=', branchId)
      .where('session_id', '=', sessionId)
      .executeTakeFirst();
  },

  async findBranch(db: Executor, branchId: string): Promise<BranchRow | undefined> {
    return db.selectFrom('branches').selectAll().where('id', '=', branchId).executeTakeFirst();
  },

  async lockBranch(tx: Tx, branchId: string): Promise<BranchRow | undefined> {
    return tx.selectFrom('branches').selectAll().where('id', '=', branchId).forUpdate().executeTakeFirst();
  },

  async findBranchByName(db: Executor, sessionId: string, name: string): Promise<BranchRow | undefined> {
    return db
      .selectFrom('branches')
      .selectAll()
      .where('session_id', '=', sessionId)
      .where('name', '=', name)
      .executeTakeFirst();
  },

  async findBranchWithHead(db: Executor, branchId: string): Promise<BranchWithHead | undefined> {
    return db
      .selectFrom('branches as b')
      .leftJoin('floors as h', 'h.id', 'b.head_floor_id')
      .select(BRANCH_WITH_HEAD)
      .where('b.id', '=', branchId)
      .executeTakeFirst();
  },

  /** Every branch of a session, oldest first (`main` first), with its head's floor_no. */
  async listBranches(db: Executor, sessionId: string): Promise<BranchWithHead[]> {
    return db
      .selectFrom('branches as b')
      .leftJoin('floors as h', 'h.id', 'b.head_floor_id')
      .select(BRANCH_WITH_HEAD)
      .where('b.session_id', '=', sessionId)
      .orderBy('b.created_at', 'asc')
      .orderBy('b.id', 'asc')
      .execute();
  },

  async listBranchNames(db: Executor, sessionId: string): Promise<string[]> {
    const rows = await db.selectFrom('branches').select('name').where('session_id', '=', sessionId).execute();
    return rows.map((r) => r.name);
  },

  /**
   * Inserts a branch, or does nothing when the session already has one of that name; returns the
   * inserted row or undefined.
   */
  async insertBranchIfAbsent(db: Executor, row: Insertable<BranchesTable>): Promise<BranchRow | undefined> {
    return db
      .insertInto('branches')
      .values(row)
      .onConflict((oc) => oc.columns(['session_id', 'name']).doNothing())
      .returningAll()
      .executeTakeFirst();
  },

  /** Inserts a branch; a duplicate name raises the unique violation (the caller maps it). */
  async insertBranch(db: Executor, row: Insertable<BranchesTable>): Promise<BranchRow> {
    return db.insertInto('branches').values(row).returningAll().executeTakeFirstOrThrow();
  },

  /**
   * Moves a branch head, only if it still is `expectedHeadId` (a conditional update); undefined when
   * the head moved meanwhile.
   */
  async moveBranchHead(
    db: Executor,
    branchId: string,
    expectedHeadId: string | null,
    newHeadId: string | null,
    now: number,
  ): Promise<BranchRow | undefined> {
    return db
      .updateTable('branches')
      .set({ head_floor_id: newHeadId, updated_at: now })
      .where('id', '=', branchId)
      .where(sql<boolean>`head_floor_id IS NOT DISTINCT FROM ${expectedHeadId}`)
      .returningAll()
      .executeTakeFirst();
  },

  async findFloor(db: Executor, floorId: string): Promise<FloorRow | undefined> {
    return db.selectFrom('floors').selectAll().where('id', '=', floorId).executeTakeFirst();
  },

  async lockFloor(tx: Tx, floorId: string): Promise<FloorRow | undefined> {
    return tx.selectFrom('floors').selectAll().where('id', '=', floorId).forUpdate().executeTakeFirst();
  },

  /** The `generating` floor of a branch, if any (at most one: a partial unique index). */
  async findGeneratingFloor(db: Executor, branchId: string): Promise<FloorRow | undefined> {
    return db
      .selectFrom('floors')
      .selectAll()
      .where('branch_id', '=', branchId)
      .where('state', '=', 'generating')
      .executeTakeFirst();
  },

  /**
   * Inserts a floor after `parent` (floor 0 without one) and puts it in a line: the parent's line when
   * the parent is still that line's last floor, else a new line forking from the parent. The parent's
   * line row is locked first, so two floors continuing from one parent never both take its line.
   * `newLineId` is the id a new line gets.
   */
  async insertFloor(tx: Tx, parent: FloorRow | null, row: NewFloor, newLineId: string): Promise<FloorRow> {
    const floorNo = parent ? parent.floor_no + 1 : 0;
    let lineId: string | null = null;
    if (parent?.line_id) {
      await tx.selectFrom('floor_lines').select('id').where('id', '=', parent.line_id).forUpdate().execute();
      const taken = await tx
        .selectFrom('floors')
        .select('id')
        .where('line_id', '=', parent.line_id)
        .where('floor_no', '=', floorNo)
        .executeTakeFirst();
      if (!taken) lineId = parent.line_id;
    }
    if (lineId === null) {
      const line = await tx
        .insertInto('floor_lines')
        .values({
          id: newLineId,
          account_id: row.account_id,
          session_id: row.session_id,
          parent_line_id: parent?.line_id ?? null,
          fork_floor_no: parent?.line_id ? parent.floor_no : null,
          start_floor_no: floorNo,
          created_at: row.created_at,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      lineId = line.id;
    }
    return tx
      .insertInto('floors')
      .values({ ...row, floor_no: floorNo, parent_floor_id: parent?.id ?? null, line_id: lineId })
      .returningAll()
      .executeTakeFirstOrThrow();
  },

  /** generating → committed, as a conditional update; undefined when the floor is no longer generating. */
  async commitFloor(
    tx: Tx,
    floorId: string,
    changes: {
      token_in: number;
      token_out: number;
      reasoning_text: string | null;
      state_snapshot?: string | null;
      metadata?: string;
    },
    now: number,
  ): Promise<FloorRow | undefined> {
    return tx
      .updateTable('floors')
      .set({ ...changes, state: 'committed', updated_at: now })
      .where('id', '=', floorId)
      .where('state', '=', 'generating')
      .returningAll()
      .executeTakeFirst();
  },

  /** Deletes a `generating` floor (its pages and messages cascade); undefined when it is not generating. */
  async deleteGeneratingFloor(tx: Tx, floorId: string): Promise<FloorRow | undefined> {
    return tx
      .deleteFrom('floors')
      .where('id', '=', floorId)
      .where('state', '=', 'generating')
      .returningAll()
      .executeTakeFirst();
  },

  /** Removes a line left with no floor and no child line (a discarded first floor of a fork). */
  async deleteLineIfEmpty(tx: Tx, lineId: string): Promise<void> {
    await tx
      .deleteFrom('floor_lines')
      .where('id', '=', lineId)
      .where((eb) =>
        eb.and([
          eb.not(eb.exists(eb.selectFrom('floors').select('id').where('line_id', '=', lineId))),
          eb.not(
            eb.exists(
              eb.selectFrom('floor_lines as c').select('c.id').where('c.parent_line_id', '=', lineId),
            ),
          ),
        ]),
      )
      .execute();
  },

  /**
   * Marks the floors a branch created after `afterFloorNo` in its lineage as superseded (a reset). Only
   * floors of that branch not yet superseded; returns their ids.
   */
  async supersedeBranchFloors(
    tx: Tx,
    branchId: string,
    floorIds: string[],
    supersededBy: string | null,
    now: number,
  ): Promise<string[]> {
    if (floorIds.length === 0) return [];
    const rows = await tx
      .updateTable('floors')
      .set({ superseded_at: now, superseded_by_floor_id: supersededBy, updated_at: now })
      .where('branch_id', '=', branchId)
      .where('id', 'in', floorIds)
      .where('superseded_at', 'is', null)
      .returning('id')
      .execute();
    return rows.map((r) => r.id);
  },

  async pagesOfFloor(db: Executor, floorId: string): Promise<PageRow[]> {
    return db
      .selectFrom('pages')
      .selectAll()
      .where('floor_id', '=', floorId)
      .orderBy('page_no', 'asc')
      .execute();
  },

  /** The next page_no of a floor and the next version of a kind on it. */
  async nextPageNumbers(
    db: Executor,
    floorId: string,
    kind: PageRow['page_kind'],
  ): Promise<{ pageNo: number; version: number }> {
    const row = await db
      .selectFrom('pages')
      .select([
        sql<number>`coalesce(max(page_no) + 1, 0)`.as('page_no'),
        sql<number>`coalesce(max(version) FILTER (WHERE page_kind = ${kind}), 0) + 1`.as('version'),
      ])
      .where('floor_id', '=', floorId)
      .executeTakeFirstOrThrow();
    return { pageNo: Number(row.page_no), version: Number(row.version) };
  },

  async insertPage(db: Executor, row: Insertable<PagesTable>): Promise<PageRow> {
    return db.insertInto('pages').values(row).returningAll().executeTakeFirstOrThrow();
  },

  async insertMessages(db: Executor, rows: Array<Insertable<MessagesTable>>): Promise<MessageRow[]> {
    if (rows.length === 0) return [];
    return db.insertInto('messages').values(rows).returningAll().execute();
  },

  /** Clears the active flag of every other page of that kind on the floor. */
  async deactivateOtherPages(
    db: Executor,
    floorId: string,
    kind: PageRow['page_kind'],
    keepPageId: string,
    now: number,
  ): Promise<number> {
    const result = await db
      .updateTable('pages')
      .set({ is_active: false, updated_at: now })
      .where('floor_id', '=', floorId)
      .where('page_kind', '=', kind)
      .where('is_active', '=', true)
      .where('id', '<>', keepPageId)
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  },

  /** Sets a page active, only if it is not already (a conditional update); undefined when it was. */
  async activatePage(db: Executor, pageId: string, now: number): Promise<PageRow | undefined> {
    return db
      .updateTable('pages')
      .set({ is_active: true, updated_at: now })
      .where('id', '=', pageId)
      .where('is_active', '=', false)
      .returningAll()
      .executeTakeFirst();
  },

  async touchFloor(db: Executor, floorId: string, now: number): Promise<void> {
    await db.updateTable('floors').set({ updated_at: now }).where('id', '=', floorId).execute();
  },
};
