import { sql } from 'kysely';
import type { Executor } from './database';
import type { LineRange } from './transcript.repository';

/** One message of a turn's history: only what the prompt engine reads. */
export interface TurnHistoryRow {
  /** Never null here: the read is by line ranges. */
  line_id: string | null;
  floor_no: number;
  message_id: string;
  role: 'system' | 'user' | 'assistant' | 'narrator' | 'tool';
  content: string;
  is_hidden: boolean;
  token_count: number | null;
  token_encoding: string | null;
}

const PAGE_KIND_ORDER = sql<number>`CASE p.page_kind WHEN 'input' THEN 0 WHEN 'greeting' THEN 1 ELSE 2 END`;

/**
 * The history read of a turn (docs/decisions.md "Turn context and dry-run"): the active pages' messages
 * of a lineage given as line ranges, oldest first (input page, greeting, output; then page_no, seq), with
 * only the columns the prompt needs (a 5,000-message history is read on every turn).
 */
export const turnHistoryRepository = {
  async activeMessages(db: Executor, ranges: LineRange[]): Promise<TurnHistoryRow[]> {
    if (ranges.length === 0) return [];
    return db
      .selectFrom('floors as f')
      .innerJoin('pages as p', (join) => join.onRef('p.floor_id', '=', 'f.id').on('p.is_active', '=', true))
      .innerJoin('messages as m', 'm.page_id', 'p.id')
      .select([
        'f.line_id',
        'f.floor_no',
        'm.id as message_id',
        'm.role',
        'm.content',
        'm.is_hidden',
        'm.token_count',
        'm.token_encoding',
      ])
      .where((eb) =>
        eb.or(
          ranges.map((r) =>
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
