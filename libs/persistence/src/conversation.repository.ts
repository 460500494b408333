import { CompiledQuery, sql, type Insertable, type Selectable } from 'kysely';
import type { Executor, Tx } from './database';
import type { FloorRow, PageRow } from './floors.repository';
import { preparedStatement } from './prepared-statements';
import type { BranchesTable, FloorLinesTable, GenerationRunRow, MessagesTable, PagesTable } from './tables';

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

/** One message of `appendFloorAfterHead`'s input page (token count counted by the caller). */
export interface AppendedMessageInput {
  id: string;
  seq: number;
  role: MessageRow['role'];
  content: string;
  content_format: string;
  is_hidden: boolean;
  source: string;
  token_count: number | null;
  token_encoding: string | null;
}

export interface AppendFloorAfterHeadInput {
  branchId: string;
  /** The head of the branch as the caller locked it (null: the branch has no floor). */
  headFloorId: string | null;
  floor: { id: string; account_id: string; session_id: string; state: 'generating' | 'committed' };
  /** The id a new line gets when the floor cannot continue its parent's line. */
  newLineId: string;
  page: { id: string; checksum: string | null };
  messages: AppendedMessageInput[];
  now: number;
}

/**
 * What `appendFloorAfterHead` read and wrote. Nothing was written when `floor` is null: then
 * `generatingFloorId` (the branch already has a generating floor) or `parent` (missing, or not
 * committed) says why.
 */
export interface AppendFloorAfterHeadOutcome {
  generatingFloorId: string | null;
  parent: Pick<FloorRow, 'id' | 'floor_no' | 'line_id' | 'state'> | null;
  floor: FloorRow | null;
  page: PageRow | null;
  messages: MessageRow[];
  branch: BranchRow | null;
}

/**
 * `appendFloorAfterHead` as one statement (docs/decisions.md "Turn latency"), run while the caller
 * holds the branch's row lock, so it sees every floor committed before the lock was granted. The
 * checks of appendUserFloor (no generating floor on the branch, the head exists and is committed)
 * gate every write. The floor continues its parent's line when the slot `(line_id, floor_no)` is free
 * (the unique index decides, also against a concurrent writer on another branch: `ON CONFLICT DO
 * NOTHING`), else it starts a new line forking from the parent; then the active input page (page 0,
 * version 1 of a new floor), its messages, and the head moves to the floor. The one-generating-floor
 * index still raises its unique violation (the caller's 409). Output is one row of JSON columns
 * (`row_to_json` gives the values of `RETURNING *`; bigints fit a number), so the result shape never
 * changes and the text runs as a prepared statement.
 */
/**
 * The `msgs` CTE: the messages (a JSON array of AppendedMessageInput, given as parameter `messages`)
 * of the page the `page` CTE inserted, with the account, session and time parameters named.
 */
export const MESSAGE_INSERTS = (p: {
  account: string;
  session: string;
  now: string;
  messages: string;
}) => `msgs AS (
  INSERT INTO messages (id, account_id, session_id, floor_id, page_id, seq, role, content, content_format,
    is_hidden, source, token_count, token_encoding, created_at)
  SELECT m.id, ${p.account}::text, ${p.session}::text, pg.floor_id, pg.id, m.seq, m.role, m.content,
    m.content_format, m.is_hidden, m.source, m.token_count, m.token_encoding, ${p.now}::bigint
  FROM page pg, jsonb_to_recordset(${p.messages}::jsonb) AS m(id text, seq integer, role text, content text,
    content_format text, is_hidden boolean, source text, token_count integer, token_encoding text)
  RETURNING *
)`;

/**
 * The floor, its line, the input page and its messages, written after `gate` (a CTE that yields one
 * row when every check passed); shared by APPEND_FLOOR_AFTER_HEAD and TURN_START. Parameters: $1
 * branch, $2 head (the parent), $3 floor id, $4 account, $5 session, $6 floor state, $7 now, $8 new
 * line id, $9 page id, $10 page checksum, $11 messages (JSON).
 */
const FLOOR_INSERTS = (gate: string) => `
continued AS (
  INSERT INTO floors (id, account_id, session_id, branch_id, floor_no, parent_floor_id, line_id, state,
    token_in, token_out, reasoning_text, metadata, superseded_at, superseded_by_floor_id, state_snapshot,
    created_at, updated_at)
  SELECT $3::text, $4::text, $5::text, $1::text, p.floor_no + 1, p.id, p.line_id, $6::text,
    0, 0, NULL, '{}'::jsonb, NULL, NULL, NULL, $7::bigint, $7::bigint
  FROM parent p, ${gate}
  WHERE p.line_id IS NOT NULL
  ON CONFLICT (line_id, floor_no) DO NOTHING
  RETURNING *
),
new_line AS (
  INSERT INTO floor_lines (id, account_id, session_id, parent_line_id, fork_floor_no, start_floor_no, created_at)
  SELECT $8::text, $4::text, $5::text, p.line_id,
    CASE WHEN p.line_id IS NULL THEN NULL ELSE p.floor_no END, COALESCE(p.floor_no + 1, 0), $7::bigint
  FROM ${gate} LEFT JOIN parent p ON true
  WHERE NOT EXISTS (SELECT 1 FROM continued)
  RETURNING id, start_floor_no
),
forked AS (
  INSERT INTO floors (id, account_id, session_id, branch_id, floor_no, parent_floor_id, line_id, state,
    token_in, token_out, reasoning_text, metadata, superseded_at, superseded_by_floor_id, state_snapshot,
    created_at, updated_at)
  SELECT $3::text, $4::text, $5::text, $1::text, l.start_floor_no, p.id, l.id, $6::text,
    0, 0, NULL, '{}'::jsonb, NULL, NULL, NULL, $7::bigint, $7::bigint
  FROM new_line l LEFT JOIN parent p ON true
  RETURNING *
),
floor AS (
  SELECT * FROM continued UNION ALL SELECT * FROM forked
),
page AS (
  INSERT INTO pages (id, account_id, session_id, floor_id, page_no, page_kind, is_active, version, checksum,
    created_at, updated_at)
  SELECT $9::text, $4::text, $5::text, f.id, 0, 'input', true, 1, $10::text, $7::bigint, $7::bigint
  FROM floor f
  RETURNING *
),
${MESSAGE_INSERTS({ account: '$4', session: '$5', now: '$7', messages: '$11' })}`;

/**
 * `appendFloorAfterHead` as one statement (docs/decisions.md "Turn latency"), run while the caller
 * holds the branch's row lock, so it sees every floor committed before the lock was granted. The
 * checks of appendUserFloor (no generating floor on the branch, the head exists and is committed)
 * gate every write. The floor continues its parent's line when the slot `(line_id, floor_no)` is free
 * (the unique index decides, also against a concurrent writer on another branch: `ON CONFLICT DO
 * NOTHING`), else it starts a new line forking from the parent; then the active input page (page 0,
 * version 1 of a new floor), its messages, and the head moves to the floor. The one-generating-floor
 * index still raises its unique violation (the caller's 409). Output is one row of JSON columns
 * (`row_to_json` gives the values of `RETURNING *`; bigints fit a number), so the result shape never
 * changes and the text runs as a prepared statement.
 */
const APPEND_FLOOR_AFTER_HEAD = preparedStatement(`
WITH parent AS (
  SELECT id, floor_no, line_id, state FROM floors WHERE id = $2::text
),
generating AS (
  SELECT id FROM floors WHERE branch_id = $1::text AND state = 'generating' LIMIT 1
),
ok AS (
  SELECT 1 AS ok
  WHERE NOT EXISTS (SELECT 1 FROM generating)
    AND ($2::text IS NULL OR EXISTS (SELECT 1 FROM parent WHERE state = 'committed'))
),
${FLOOR_INSERTS('ok')},
moved AS (
  UPDATE branches b SET head_floor_id = f.id, updated_at = $7::bigint
  FROM floor f
  WHERE b.id = $1::text AND b.head_floor_id IS NOT DISTINCT FROM $2::text
  RETURNING b.*
)
SELECT
  (SELECT id FROM generating) AS generating_floor_id,
  (SELECT row_to_json(p) FROM parent p) AS parent,
  (SELECT row_to_json(f) FROM floor f) AS floor,
  (SELECT row_to_json(x) FROM page x) AS page,
  (SELECT coalesce(json_agg(m ORDER BY m.seq), '[]'::json) FROM msgs m) AS messages,
  (SELECT row_to_json(b) FROM moved b) AS branch
`);

/**
 * The start of a respond turn as ONE autocommit statement (docs/decisions.md "Turn latency"): the
 * branch's head moves to the new floor only if the head is still the floor the turn was assembled on,
 * the branch belongs to the session, it has no generating floor and the head is committed; that
 * update (which takes the branch's row lock and re-checks the head on the newest row version) gates
 * every insert: the floor, its line, the input page, its messages and the `running` run. Either all
 * of it is written or nothing. The checks on other rows use the statement's snapshot, which may be
 * older than the lock: a check that fails on an old snapshot only sends the caller to the locked,
 * step-by-step path, and what an old snapshot cannot see is caught by the unique indexes (one
 * generating floor, one running run per branch). The head's update is ordered before the floor insert
 * within the statement; the foreign key is checked at the statement's end. Parameters as
 * FLOOR_INSERTS, then $12 run id, $13 run type, $14 detached, $15 temp id, $16 lease expiry.
 */
const TURN_START = preparedStatement(`
WITH parent AS (
  SELECT id, floor_no, line_id, state FROM floors WHERE id = $2::text
),
async_commit AS (
  SELECT set_config('synchronous_commit', 'off', true) AS value
),
moved AS (
  UPDATE branches b SET head_floor_id = $3::text, updated_at = $7::bigint
  WHERE b.id = $1::text AND b.session_id = $5::text AND b.head_floor_id IS NOT DISTINCT FROM $2::text
    AND NOT EXISTS (SELECT 1 FROM floors g WHERE g.branch_id = $1::text AND g.state = 'generating')
    AND ($2::text IS NULL OR EXISTS (SELECT 1 FROM parent WHERE state = 'committed'))
    AND EXISTS (SELECT 1 FROM async_commit)
  RETURNING b.*
),
${FLOOR_INSERTS('moved')},
run AS (
  INSERT INTO generation_runs (id, account_id, session_id, branch_id, floor_id, run_type, status, phase,
    detached, temp_id, error, pending_reasoning, lease_expires_at, started_at, updated_at, completed_at)
  SELECT $12::text, $4::text, $5::text, $1::text, f.id, $13::text, 'running', 'generating',
    $14::boolean, $15::text, NULL, NULL, $16::bigint, $7::bigint, $7::bigint, NULL
  FROM floor f
  RETURNING *
)
SELECT
  (SELECT row_to_json(f) FROM floor f) AS floor,
  (SELECT row_to_json(x) FROM page x) AS page,
  (SELECT coalesce(json_agg(m ORDER BY m.seq), '[]'::json) FROM msgs m) AS messages,
  (SELECT row_to_json(b) FROM moved b) AS branch,
  (SELECT row_to_json(r) FROM run r) AS run
`);

/**
 * A page of a floor and its messages (`insertPageWithMessages`): page_no is the floor's next, version
 * the next of the kind, then the messages; output as JSON columns (a fixed shape, prepared).
 */
const WRITE_PAGE = preparedStatement(`
WITH numbers AS (
  SELECT coalesce(max(page_no) + 1, 0) AS page_no,
    coalesce(max(version) FILTER (WHERE page_kind = $5::text), 0) + 1 AS version
  FROM pages WHERE floor_id = $4::text
),
page AS (
  INSERT INTO pages (id, account_id, session_id, floor_id, page_no, page_kind, is_active, version, checksum,
    created_at, updated_at)
  SELECT $1::text, $2::text, $3::text, $4::text, n.page_no, $5::text, $6::boolean, n.version, $7::text,
    $8::bigint, $8::bigint
  FROM numbers n
  RETURNING *
),
${MESSAGE_INSERTS({ account: '$2', session: '$3', now: '$8', messages: '$9' })}
SELECT (SELECT row_to_json(x) FROM page x) AS page,
  (SELECT coalesce(json_agg(m ORDER BY m.seq), '[]'::json) FROM msgs m) AS messages
`);

/** The branch row lock of a turn, as a prepared statement (explicit columns: a fixed result shape). */
const LOCK_BRANCH = preparedStatement(`
SELECT id, account_id, session_id, name, source_floor_id, head_floor_id, created_at, updated_at
FROM branches WHERE id = $1::text FOR UPDATE
`);

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
  /**
   * A page with its messages in one statement (WRITE_PAGE): the floor's next page_no and the next
   * version of the page's kind are computed from the floor's pages as it runs.
   */
  async insertPageWithMessages(
    db: Executor,
    page: Omit<Insertable<PagesTable>, 'page_no' | 'version' | 'updated_at'> & { created_at: number },
    messages: AppendedMessageInput[],
  ): Promise<{ page: PageRow; messages: MessageRow[] }> {
    const result = await db.executeQuery<{ page: PageRow; messages: MessageRow[] }>(
      CompiledQuery.raw(WRITE_PAGE, [
        page.id,
        page.account_id,
        page.session_id,
        page.floor_id,
        page.page_kind,
        page.is_active ?? false,
        page.checksum ?? null,
        page.created_at,
        JSON.stringify(messages),
      ]),
    );
    return result.rows[0];
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

  /** `lockBranch` as a prepared statement (the turn's hot path); the same row. */
  async lockBranchForTurn(tx: Tx, branchId: string): Promise<BranchRow | undefined> {
    const result = await tx.executeQuery<BranchRow>(CompiledQuery.raw(LOCK_BRANCH, [branchId]));
    return result.rows[0];
  },

  /**
   * The start of a respond turn in one autocommit statement (see TURN_START): the floor after the
   * head the turn was assembled on, its input page and messages, the head moved and the `running` run
   * inserted, or nothing at all (`undefined`: a check failed; the caller takes the locked path, which
   * names the error). A unique violation (another generating floor or running run) is thrown.
   */
  async startTurn(
    db: Executor,
    input: AppendFloorAfterHeadInput & {
      run: { id: string; run_type: string; detached: boolean; temp_id: string; lease_expires_at: number };
    },
  ): Promise<
    | { floor: FloorRow; page: PageRow; messages: MessageRow[]; branch: BranchRow; run: GenerationRunRow }
    | undefined
  > {
    const result = await db.executeQuery<{
      floor: FloorRow | null;
      page: PageRow | null;
      messages: MessageRow[];
      branch: BranchRow | null;
      run: GenerationRunRow | null;
    }>(
      CompiledQuery.raw(TURN_START, [
        ...appendParameters(input),
        input.run.id,
        input.run.run_type,
        input.run.detached,
        input.run.temp_id,
        input.run.lease_expires_at,
      ]),
    );
    const row = result.rows[0];
    if (!row?.floor || !row.page || !row.branch || !row.run) return undefined;
    return { floor: row.floor, page: row.page, messages: row.messages, branch: row.branch, run: row.run };
  },

  /**
   * A floor after the locked branch's head with its active input page and messages, and the head
   * moved to it, in one statement (see APPEND_FLOOR_AFTER_HEAD). The caller holds the branch's row
   * lock and turns a null `floor` into its error.
   */
  async appendFloorAfterHead(tx: Tx, input: AppendFloorAfterHeadInput): Promise<AppendFloorAfterHeadOutcome> {
    const result = await tx.executeQuery<{
      generating_floor_id: string | null;
      parent: AppendFloorAfterHeadOutcome['parent'];
      floor: FloorRow | null;
      page: PageRow | null;
      messages: MessageRow[];
      branch: BranchRow | null;
    }>(CompiledQuery.raw(APPEND_FLOOR_AFTER_HEAD, appendParameters(input)));
    const row = result.rows[0];
    return {
      generatingFloorId: row.generating_floor_id,
      parent: row.parent,
      floor: row.floor,
      page: row.page,
      messages: row.messages,
      branch: row.branch,
    };
  },
};

/** $1-$11 of FLOOR_INSERTS. */
function appendParameters(input: AppendFloorAfterHeadInput): unknown[] {
  return [
    input.branchId,
    input.headFloorId,
    input.floor.id,
    input.floor.account_id,
    input.floor.session_id,
    input.floor.state,
    input.now,
    input.newLineId,
    input.page.id,
    input.page.checksum,
    JSON.stringify(input.messages),
  ];
}
