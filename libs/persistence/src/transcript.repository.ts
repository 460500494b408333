import { sql } from 'kysely';
import type { Executor } from './database';
import type { FloorRow, PageRow } from './floors.repository';
import type { MessageRow } from './conversation.repository';

/** One line's share of a lineage: the floors of `line_id` with floor_no in [lo, hi]. */
export interface LineRange {
  line_id: string;
  lo: number;
  hi: number;
}

/** A message of an active page in a lineage, for prompt assembly (oldest first). */
export interface LineageMessageRow {
  floor_id: string;
  floor_no: number;
  floor_state: FloorRow['state'];
  page_id: string;
  page_kind: PageRow['page_kind'];
  message_id: string;
  seq: number;
  role: MessageRow['role'];
  content: string;
  content_format: string;
  is_hidden: boolean;
  source: string;
  token_count: number | null;
  token_encoding: string | null;
}

/** Input before output: the order of a floor's active pages in a prompt. */
const PAGE_KIND_ORDER = sql<number>`CASE p.page_kind WHEN 'input' THEN 0 WHEN 'greeting' THEN 1 ELSE 2 END`;

/**
 * Reads of a branch's lineage (its head floor and the head's ancestors). A lineage has exactly one floor
 * per floor_no from 0 to the head's, so a window of floor numbers is computed, never scanned for.
 * Floors are found through their lines (see db/migrations/20261122060000_conversation_model.ts): a
 * recursive query over the few line rows, then index range scans on `(line_id, floor_no)`.
 */
export const transcriptRepository = {
  /** The line ranges that make up the lineage ending at `head`, newest line first. */
  async lineageRanges(db: Executor, head: Pick<FloorRow, 'line_id' | 'floor_no'>): Promise<LineRange[]> {
    if (!head.line_id) return [];
    const result = await sql<{ line_id: string; lo: number; hi: number }>`
      WITH RECURSIVE chain (line_id, parent_line_id, fork_floor_no, lo, hi) AS (
        SELECT id, parent_line_id, fork_floor_no, start_floor_no, ${head.floor_no}::integer
        FROM floor_lines WHERE id = ${head.line_id}
        UNION ALL
        SELECT l.id, l.parent_line_id, l.fork_floor_no, l.start_floor_no, c.fork_floor_no
        FROM floor_lines l JOIN chain c ON l.id = c.parent_line_id
      )
      SELECT line_id, lo, hi FROM chain
    `.execute(db);
    return result.rows.map((r) => ({ line_id: r.line_id, lo: Number(r.lo), hi: Number(r.hi) }));
  },

  /** The lineage's floors with floor_no in [from, to], ascending. */
  async floorsInRanges(db: Executor, ranges: LineRange[], from: number, to: number): Promise<FloorRow[]> {
    const parts = clip(ranges, from, to);
    if (parts.length === 0) return [];
    return db
      .selectFrom('floors')
      .selectAll()
      .where((eb) =>
        eb.or(
          parts.map((r) =>
            eb.and([eb('line_id', '=', r.line_id), eb('floor_no', '>=', r.lo), eb('floor_no', '<=', r.hi)]),
          ),
        ),
      )
      .orderBy('floor_no', 'asc')
      .execute();
  },

  /**
   * The lineage of a floor without a line (rows written before lines existed, e.g. by test factories):
   * a walk up `parent_floor_id`, cut to [from, to].
   */
  async floorsByParentWalk(db: Executor, headFloorId: string, from: number, to: number): Promise<FloorRow[]> {
    const result = await sql<FloorRow>`
      WITH RECURSIVE chain AS (
        SELECT f.* FROM floors f WHERE f.id = ${headFloorId}
        UNION ALL
        SELECT f.* FROM floors f JOIN chain c ON f.id = c.parent_floor_id WHERE c.floor_no > ${from}
      )
      SELECT * FROM chain WHERE floor_no BETWEEN ${from} AND ${to} ORDER BY floor_no ASC
    `.execute(db);
    return result.rows;
  },

  async pagesOfFloors(db: Executor, floorIds: string[]): Promise<PageRow[]> {
    if (floorIds.length === 0) return [];
    return db
      .selectFrom('pages')
      .selectAll()
      .where('floor_id', 'in', floorIds)
      .orderBy('floor_id')
      .orderBy('page_no', 'asc')
      .execute();
  },

  async messagesOfFloors(db: Executor, floorIds: string[]): Promise<MessageRow[]> {
    if (floorIds.length === 0) return [];
    return db
      .selectFrom('messages')
      .selectAll()
      .where('floor_id', 'in', floorIds)
      .orderBy('floor_id')
      .orderBy('page_id')
      .orderBy('seq', 'asc')
      .execute();
  },

  /**
   * The messages of the active pages of the lineage's floors with floor_no in [from, to], oldest first
   * (input page before output page, then by seq), with their stored token counts.
   */
  async activeMessagesInRanges(
    db: Executor,
    ranges: LineRange[],
    from: number,
    to: number,
  ): Promise<LineageMessageRow[]> {
    const parts = clip(ranges, from, to);
    if (parts.length === 0) return [];
    return db
      .selectFrom('floors as f')
      .innerJoin('pages as p', (join) => join.onRef('p.floor_id', '=', 'f.id').on('p.is_active', '=', true))
      .innerJoin('messages as m', 'm.page_id', 'p.id')
      .select([
        'f.id as floor_id',
        'f.floor_no',
        'f.state as floor_state',
        'p.id as page_id',
        'p.page_kind',
        'm.id as message_id',
        'm.seq',
        'm.role',
        'm.content',
        'm.content_format',
        'm.is_hidden',
        'm.source',
        'm.token_count',
        'm.token_encoding',
      ])
      .where((eb) =>
        eb.or(
          parts.map((r) =>
            eb.and([
              eb('f.line_id', '=', r.line_id),
              eb('f.floor_no', '>=', r.lo),
              eb('f.floor_no', '<=', r.hi),
            ]),
          ),
        ),
      )
      .orderBy('f.floor_no', 'asc')
      .orderBy(PAGE_KIND_ORDER)
      .orderBy('p.page_no', 'asc')
      .orderBy('m.seq', 'asc')
      .execute();
  },
};

/** The ranges cut to [from, to], dropping those outside. */
function clip(ranges: LineRange[], from: number, to: number): LineRange[] {
  return ranges
    .map((r) => ({ line_id: r.line_id, lo: Math.max(r.lo, from), hi: Math.min(r.hi, to) }))
    .filter((r) => r.lo <= r.hi);
}
