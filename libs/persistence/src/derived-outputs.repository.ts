import { CompiledQuery, type Insertable, type Selectable, type Updateable } from 'kysely';
import type { Executor, Tx } from './database';
import type { NewOperationLog } from './operation-logs.repository';
import type { NewProjectEvent } from './project-events.repository';
import { preparedStatement } from './prepared-statements';
import type { ProjectMemberRow, ProjectRow } from './projects.repository';
import type { StatementExecutor } from './statement-pipeline';
import type { DerivedOutputsTable } from './tables';
import {
  OPERATION_LOG_COLUMNS,
  PROJECT_EVENT_COLUMNS,
  columnNames,
  columnsExcept,
  parameterSlots,
} from './typed-columns';

export type DerivedOutputRow = Selectable<DerivedOutputsTable>;

export interface DerivedOutputListQuery {
  projectId: string;
  domain?: string;
  status?: DerivedOutputRow['status'];
  sourceSessionId?: string;
  ownerAccountId?: string;
  /** Keyset: only entries with a smaller id (the list is newest first). */
  beforeId?: string;
  limit: number;
}

/** Named queries for derived outputs (spec 1 "Derived outputs"). */
export const derivedOutputsRepository = {
  async insert(tx: Tx, row: Insertable<DerivedOutputsTable>): Promise<DerivedOutputRow> {
    return tx.insertInto('derived_outputs').values(row).returningAll().executeTakeFirstOrThrow();
  },

  async findInProject(db: Executor, projectId: string, id: string): Promise<DerivedOutputRow | undefined> {
    return db
      .selectFrom('derived_outputs')
      .selectAll()
      .where('project_id', '=', projectId)
      .where('id', '=', id)
      .executeTakeFirst();
  },

  /** The entry locked until the transaction ends, so concurrent updates of one entry serialise. */
  async findInProjectForUpdate(tx: Tx, projectId: string, id: string): Promise<DerivedOutputRow | undefined> {
    return tx
      .selectFrom('derived_outputs')
      .selectAll()
      .where('project_id', '=', projectId)
      .where('id', '=', id)
      .forUpdate()
      .executeTakeFirst();
  },

  async update(
    tx: Tx,
    id: string,
    changes: Pick<Updateable<DerivedOutputsTable>, 'value' | 'value_byte_count' | 'status'> & {
      updated_at: number;
    },
  ): Promise<DerivedOutputRow> {
    return tx
      .updateTable('derived_outputs')
      .set(changes)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
  },

  /** One page of a Project's entries, newest first, `limit` rows (ask for one more to learn if more follow). */
  async list(db: Executor, query: DerivedOutputListQuery): Promise<DerivedOutputRow[]> {
    let q = db.selectFrom('derived_outputs').selectAll().where('project_id', '=', query.projectId);
    if (query.domain !== undefined) q = q.where('domain', '=', query.domain);
    if (query.status !== undefined) q = q.where('status', '=', query.status);
    if (query.sourceSessionId !== undefined) q = q.where('source_session_id', '=', query.sourceSessionId);
    if (query.ownerAccountId !== undefined) q = q.where('owner_account_id', '=', query.ownerAccountId);
    if (query.beforeId !== undefined) q = q.where('id', '<', query.beforeId);
    return q.orderBy('id', 'desc').limit(query.limit).execute();
  },

  /** Every entry of a Project, oldest first (tests and maintenance; the API pages through `list`). */
  async listAllOfProject(db: Executor, projectId: string): Promise<DerivedOutputRow[]> {
    return db
      .selectFrom('derived_outputs')
      .selectAll()
      .where('project_id', '=', projectId)
      .orderBy('id', 'asc')
      .execute();
  },
};

/** Where a source floor or page lives: enough to check it belongs to the entry's Project and session. */
export interface SourceScope {
  account_id: string;
  project_id: string;
  session_id: string;
  /** For a page: the floor it belongs to. */
  floor_id?: string;
}

/**
 * The floor and page lookups that derived outputs and inbox entries validate their sources with: the
 * account, Project and session a floor or page lives in (through its session). A temporary
 * conversation's floors and pages are not sources (they read as missing, as its session does).
 */
export const derivedOutputSourcesRepository = {
  async findFloorScope(db: Executor, floorId: string): Promise<SourceScope | undefined> {
    return db
      .selectFrom('floors')
      .innerJoin('sessions', 'sessions.id', 'floors.session_id')
      .select(['floors.account_id', 'sessions.project_id', 'floors.session_id'])
      .where('floors.id', '=', floorId)
      .where('sessions.kind', '=', 'standard')
      .executeTakeFirst();
  },

  async findPageScope(db: Executor, pageId: string): Promise<SourceScope | undefined> {
    return db
      .selectFrom('pages')
      .innerJoin('sessions', 'sessions.id', 'pages.session_id')
      .select(['pages.account_id', 'sessions.project_id', 'pages.session_id', 'pages.floor_id'])
      .where('pages.id', '=', pageId)
      .where('sessions.kind', '=', 'standard')
      .executeTakeFirst();
  },
};

/** Who writes: the caller's account and Client (ProjectAccess.roleOf's inputs). */
export interface DerivedOutputWriter {
  accountId: string;
  clientId: string;
  clientIsDefault: boolean;
}

/** The columns a create sets itself; the Project's Workspace, account and id come from its row. */
export type NewDerivedOutputFields = Omit<
  Insertable<DerivedOutputsTable>,
  'workspace_id' | 'project_id' | 'account_id' | 'source_session_id' | 'source_floor_id' | 'source_page_id'
>;
/** An operation log row whose account, Workspace and Project come from the Project row. */
export type ProjectScopedLog = Omit<NewOperationLog, 'account_id' | 'workspace_id' | 'project_id'>;
/** A Project event row whose Workspace and Project come from the Project row (the sequence from its counter). */
export type ProjectScopedEvent = Omit<NewProjectEvent, 'workspace_id' | 'project_id'>;

export interface CreateDerivedOutputStatement {
  projectId: string;
  writer: DerivedOutputWriter;
  /** The Project roles that may write (the capability table's answer, so the rule stays in one place). */
  writerRoles: readonly string[];
  sources: {
    source_session_id: string | null;
    source_floor_id: string | null;
    source_page_id: string | null;
  };
  entry: NewDerivedOutputFields;
  log: ProjectScopedLog;
  event: ProjectScopedEvent;
}

/** What the create statement read, and what it wrote when everything allowed the write. */
export interface CreateDerivedOutputOutcome {
  /** Undefined when the Project does not exist. */
  project?: ProjectRow;
  /** The caller's role on the Project (ProjectAccess.roleOf), null for a non-member. */
  role: ProjectMemberRow['role'] | 'owner' | null;
  sessionScope: Pick<SourceScope, 'account_id' | 'project_id'> | null;
  floorScope: SourceScope | null;
  pageScope: SourceScope | null;
  /** The new entry, when written (then its log and event were written with it). */
  entry?: DerivedOutputRow;
  eventSequence?: number;
}

const ENTRY_COLUMNS = [
  ['id', 'text'],
  ['owner_account_id', 'text'],
  ['created_by_client_id', 'text'],
  ['domain', 'text'],
  ['value', 'jsonb'],
  ['value_byte_count', 'integer'],
  ['status', 'text'],
  ['created_at', 'bigint'],
  ['updated_at', 'bigint'],
] as const satisfies ReadonlyArray<readonly [keyof NewDerivedOutputFields, string]>;

/** The log's and event's columns but those the statements take from the Project row. */
const LOG_COLUMNS = columnsExcept(OPERATION_LOG_COLUMNS, 'account_id', 'workspace_id', 'project_id');
const EVENT_COLUMNS = columnsExcept(PROJECT_EVENT_COLUMNS, 'workspace_id', 'project_id');

/** $1..$8: writer account, Client, is-default, Project id, source session, floor, page, writer roles. */
const FIXED_PARAMETERS = 8;
const ENTRY_FIRST = FIXED_PARAMETERS + 1;
const LOG_FIRST = ENTRY_FIRST + ENTRY_COLUMNS.length;
const EVENT_FIRST = LOG_FIRST + LOG_COLUMNS.length;

/**
 * `POST /projects/:id/derived-outputs` as one statement, hence one transaction: the Project row
 * (share-locked, so a concurrent archive is ordered before or after the write, as for inbox writes)
 * with the caller's role (the rule of ProjectAccess.roleOf: the account's default Client owns its
 * account's Projects; otherwise an active membership, `client` rows of the Client, and for a default
 * Client also `account` rows of its account, the wider role first), the source session, floor and
 * page scopes, and, only when the role may write, the Project is not archived and every source
 * belongs to it (the rules of validateDerivedOutputSources), the entry, its operation log, the
 * Project's counter bump and the event. The counter row stays locked until the statement commits,
 * so sequences are gap-free and commit in order. The caller turns what was read into the error when
 * nothing was written.
 */
const CREATE_WITH_JOURNAL = preparedStatement(`
WITH p AS (
  SELECT pr.*,
    CASE WHEN pr.account_id = $1::text AND $3::boolean THEN 'owner' ELSE (
      SELECT m.role FROM project_members m
      WHERE m.project_id = pr.id AND m.status = 'active'
        AND ((m.subject_type = 'client' AND m.subject_id = $2::text)
          OR ($3::boolean AND m.subject_type = 'account' AND m.subject_id = $1::text))
      ORDER BY (m.role = 'deriver') DESC
      LIMIT 1
    ) END AS role
  FROM projects pr
  WHERE pr.id = $4::text
  FOR SHARE OF pr
),
s AS (
  SELECT account_id, project_id FROM sessions WHERE id = $5::text AND kind = 'standard'
),
f AS (
  SELECT fl.account_id, se.project_id, fl.session_id
  FROM floors fl JOIN sessions se ON se.id = fl.session_id
  WHERE fl.id = $6::text AND se.kind = 'standard'
),
pa AS (
  SELECT pg.account_id, se.project_id, pg.session_id, pg.floor_id
  FROM pages pg JOIN sessions se ON se.id = pg.session_id
  WHERE pg.id = $7::text AND se.kind = 'standard'
),
ok AS (
  SELECT p.id, p.workspace_id, p.account_id FROM p
  WHERE p.role = ANY($8::text[]) AND p.status <> 'archived'
    AND ($5::text IS NULL OR EXISTS (
      SELECT 1 FROM s WHERE s.account_id = p.account_id AND s.project_id = p.id))
    AND ($6::text IS NULL OR EXISTS (
      SELECT 1 FROM f WHERE f.account_id = p.account_id AND f.project_id = p.id
        AND ($5::text IS NULL OR f.session_id = $5::text)))
    AND ($7::text IS NULL OR EXISTS (
      SELECT 1 FROM pa WHERE pa.account_id = p.account_id AND pa.project_id = p.id
        AND ($5::text IS NULL OR pa.session_id = $5::text)
        AND ($6::text IS NULL OR pa.floor_id = $6::text)))
),
entry AS (
  INSERT INTO derived_outputs (workspace_id, project_id, account_id, source_session_id, source_floor_id,
    source_page_id, ${columnNames(ENTRY_COLUMNS)})
  SELECT ok.workspace_id, ok.id, ok.account_id, $5::text, $6::text, $7::text, ${parameterSlots(ENTRY_COLUMNS, ENTRY_FIRST)}
  FROM ok
  RETURNING *
),
log AS (
  INSERT INTO operation_logs (account_id, workspace_id, project_id, ${columnNames(LOG_COLUMNS)})
  SELECT ok.account_id, ok.workspace_id, ok.id, ${parameterSlots(LOG_COLUMNS, LOG_FIRST)}
  FROM ok
),
counter AS (
  INSERT INTO project_event_counters AS c (project_id, last_sequence)
  SELECT ok.id, 1 FROM ok
  ON CONFLICT (project_id) DO UPDATE SET last_sequence = c.last_sequence + 1
  RETURNING project_id, last_sequence
),
event AS (
  INSERT INTO project_events (workspace_id, project_id, sequence, ${columnNames(EVENT_COLUMNS)})
  SELECT ok.workspace_id, ok.id, counter.last_sequence, ${parameterSlots(EVENT_COLUMNS, EVENT_FIRST)}
  FROM ok JOIN counter ON counter.project_id = ok.id
  RETURNING sequence
)
SELECT
  row_to_json(p) AS project,
  (SELECT row_to_json(s) FROM s) AS session_scope,
  (SELECT row_to_json(f) FROM f) AS floor_scope,
  (SELECT row_to_json(pa) FROM pa) AS page_scope,
  (SELECT sequence FROM event) AS event_sequence,
  (SELECT row_to_json(entry) FROM entry) AS entry
FROM p
`);

interface CreateWithJournalRow {
  project: ProjectRow & { role: CreateDerivedOutputOutcome['role'] };
  session_scope: CreateDerivedOutputOutcome['sessionScope'];
  floor_scope: SourceScope | null;
  page_scope: SourceScope | null;
  event_sequence: number | null;
  /** `row_to_json` of the inserted row: the same values as `RETURNING *` (bigints fit a number). */
  entry: DerivedOutputRow | null;
}

/** The batch items' JSON keys: `n` (position), the writer, the Project, the sources, then the columns. */
const ITEM_FIELDS = [
  ['n', 'integer'],
  ['w_account', 'text'],
  ['w_client', 'text'],
  ['w_default', 'boolean'],
  ['project_id', 'text'],
  ['source_session_id', 'text'],
  ['source_floor_id', 'text'],
  ['source_page_id', 'text'],
] as const;
const prefixed = (prefix: string, columns: ReadonlyArray<readonly [string, string]>) =>
  columns.map(([c, type]) => [prefix + c, type, c] as const);
const E_FIELDS = prefixed('e_', ENTRY_COLUMNS);
const L_FIELDS = prefixed('l_', LOG_COLUMNS);
const V_FIELDS = prefixed('v_', EVENT_COLUMNS);
// jsonb columns travel as their JSON text (what `$n::jsonb` receives in the single statement) and
// are cast where inserted, so a value is parsed exactly as the single statement parses it.
const recordType = (type: string) => (type === 'jsonb' ? 'text' : type);
const RECORD_DEFINITION = [...ITEM_FIELDS, ...E_FIELDS, ...L_FIELDS, ...V_FIELDS]
  .map(([key, type]) => `${key} ${recordType(type)}`)
  .join(', ');
const recordValues = (fields: ReadonlyArray<readonly [string, string, string]>) =>
  fields.map(([key, type]) => `ok.${key}${type === 'jsonb' ? '::jsonb' : ''}`).join(', ');

/**
 * CREATE_WITH_JOURNAL for several creates at once (group commit): one statement, hence one
 * transaction, one round trip and one commit for the whole batch, and per item exactly what the
 * single statement reads and writes. $1 is a JSON array of items (ITEM_FIELDS, then the entry, log
 * and event columns under the prefixes e_, l_, v_), $2 the writer roles. Every rule is evaluated per
 * item against its own Project row, role and sources, so a refused item writes nothing of its own
 * and does not affect the others. Only items whose Project exists come back (`n` says which).
 *
 * At most one item per Project (the caller guarantees it; the counter upsert fails otherwise, and
 * the caller then writes the items one by one), so each Project's counter is bumped once. Locks are
 * taken in Project id order (the items sorted by Project id drive the nested loop whose inner side
 * share-locks each Project row, and the counter rows are upserted in the same order), so two
 * batches, or a batch and a single-Project writer, cannot deadlock. The Project and source lookups
 * are LATERAL subqueries (a locking or LIMIT subquery is never flattened into a join), i.e. one
 * primary-key probe per item whatever the table sizes and the plan's row estimates: with a plain
 * join, json_to_recordset's fixed estimate of 100 rows made the planner sort-merge every Project of
 * the database into each batch (~0.2 ms per statement with 200 Projects, growing with their number).
 */
const CREATE_BATCH_WITH_JOURNAL = preparedStatement(`
WITH i AS (
  SELECT * FROM json_to_recordset($1::json) AS i(${RECORD_DEFINITION}) ORDER BY i.project_id
),
p AS (
  SELECT i.*, pr.workspace_id AS p_workspace_id, pr.account_id AS p_account_id, pr.status AS p_status,
    to_json(pr) AS project,
    CASE WHEN pr.account_id = i.w_account AND i.w_default THEN 'owner' ELSE (
      SELECT m.role FROM project_members m
      WHERE m.project_id = pr.id AND m.status = 'active'
        AND ((m.subject_type = 'client' AND m.subject_id = i.w_client)
          OR (i.w_default AND m.subject_type = 'account' AND m.subject_id = i.w_account))
      ORDER BY (m.role = 'deriver') DESC
      LIMIT 1
    ) END AS role,
    s.account_id AS s_account_id, s.project_id AS s_project_id,
    f.account_id AS f_account_id, f.project_id AS f_project_id, f.session_id AS f_session_id,
    pa.account_id AS pa_account_id, pa.project_id AS pa_project_id, pa.session_id AS pa_session_id,
    pa.floor_id AS pa_floor_id
  FROM i
  JOIN LATERAL (SELECT * FROM projects WHERE projects.id = i.project_id FOR SHARE) pr ON true
  LEFT JOIN LATERAL (
    SELECT se.account_id, se.project_id FROM sessions se
    WHERE se.id = i.source_session_id AND se.kind = 'standard' LIMIT 1
  ) s ON true
  LEFT JOIN LATERAL (
    SELECT fl.account_id, se.project_id, fl.session_id
    FROM floors fl JOIN sessions se ON se.id = fl.session_id
    WHERE fl.id = i.source_floor_id AND se.kind = 'standard' LIMIT 1
  ) f ON true
  LEFT JOIN LATERAL (
    SELECT pg.account_id, se.project_id, pg.session_id, pg.floor_id
    FROM pages pg JOIN sessions se ON se.id = pg.session_id
    WHERE pg.id = i.source_page_id AND se.kind = 'standard' LIMIT 1
  ) pa ON true
),
ok AS (
  SELECT * FROM p
  WHERE p.role = ANY($2::text[]) AND p.p_status <> 'archived'
    AND (p.source_session_id IS NULL
      OR (p.s_account_id = p.p_account_id AND p.s_project_id = p.project_id))
    AND (p.source_floor_id IS NULL
      OR (p.f_account_id = p.p_account_id AND p.f_project_id = p.project_id
        AND (p.source_session_id IS NULL OR p.f_session_id = p.source_session_id)))
    AND (p.source_page_id IS NULL
      OR (p.pa_account_id = p.p_account_id AND p.pa_project_id = p.project_id
        AND (p.source_session_id IS NULL OR p.pa_session_id = p.source_session_id)
        AND (p.source_floor_id IS NULL OR p.pa_floor_id = p.source_floor_id)))
),
entry AS (
  INSERT INTO derived_outputs (workspace_id, project_id, account_id, source_session_id, source_floor_id,
    source_page_id, ${columnNames(ENTRY_COLUMNS)})
  SELECT ok.p_workspace_id, ok.project_id, ok.p_account_id, ok.source_session_id, ok.source_floor_id,
    ok.source_page_id, ${recordValues(E_FIELDS)}
  FROM ok
  RETURNING derived_outputs.id, to_json(derived_outputs) AS row
),
log AS (
  INSERT INTO operation_logs (account_id, workspace_id, project_id, ${columnNames(LOG_COLUMNS)})
  SELECT ok.p_account_id, ok.p_workspace_id, ok.project_id, ${recordValues(L_FIELDS)}
  FROM ok
),
counter AS (
  INSERT INTO project_event_counters AS c (project_id, last_sequence)
  SELECT ok.project_id, 1 FROM ok ORDER BY ok.project_id
  ON CONFLICT (project_id) DO UPDATE SET last_sequence = c.last_sequence + 1
  RETURNING project_id, last_sequence
),
event AS (
  INSERT INTO project_events (workspace_id, project_id, sequence, ${columnNames(EVENT_COLUMNS)})
  SELECT ok.p_workspace_id, ok.project_id, counter.last_sequence, ${recordValues(V_FIELDS)}
  FROM ok JOIN counter ON counter.project_id = ok.project_id
  RETURNING project_id, sequence
)
SELECT p.n, p.project, p.role,
  p.s_account_id, p.s_project_id, p.f_account_id, p.f_project_id, p.f_session_id,
  p.pa_account_id, p.pa_project_id, p.pa_session_id, p.pa_floor_id,
  event.sequence AS event_sequence, entry.row AS entry
FROM p
LEFT JOIN entry ON entry.id = p.e_id
LEFT JOIN event ON event.project_id = p.project_id
`);

/** One row per item whose Project exists; the source columns are null when a source was not found. */
interface CreateBatchRow {
  n: number;
  project: ProjectRow;
  role: CreateDerivedOutputOutcome['role'];
  s_account_id: string | null;
  s_project_id: string | null;
  f_account_id: string | null;
  f_project_id: string | null;
  f_session_id: string | null;
  pa_account_id: string | null;
  pa_project_id: string | null;
  pa_session_id: string | null;
  pa_floor_id: string | null;
  event_sequence: number | null;
  /** `to_json` of the inserted row: the same values as `RETURNING *` (bigints fit a number). */
  entry: DerivedOutputRow | null;
}

/** A jsonb column's (non-null) value as the JSON text the single statement's `$n::jsonb` receives. */
const jsonText = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value));

function batchItem(n: number, input: CreateDerivedOutputStatement): Record<string, unknown> {
  const item: Record<string, unknown> = {
    n,
    w_account: input.writer.accountId,
    w_client: input.writer.clientId,
    w_default: input.writer.clientIsDefault,
    project_id: input.projectId,
    source_session_id: input.sources.source_session_id,
    source_floor_id: input.sources.source_floor_id,
    source_page_id: input.sources.source_page_id,
  };
  // A null column is left out of the item: json_to_recordset reads a missing key as NULL, and most
  // of a log's and an event's columns are null, so the statement has that much less JSON to parse.
  const put = (fields: typeof E_FIELDS | typeof L_FIELDS | typeof V_FIELDS, values: object) => {
    const row = values as Record<string, unknown>;
    for (const [key, type, column] of fields) {
      const value = row[column] ?? null;
      if (value !== null) item[key] = type === 'jsonb' ? jsonText(value) : value;
    }
  };
  put(E_FIELDS, input.entry);
  put(L_FIELDS, input.log);
  put(V_FIELDS, input.event);
  return item;
}

/** What the single statement answers for the item of a batch row (null: its Project does not exist). */
function outcomeOf(row: CreateBatchRow | undefined): CreateDerivedOutputOutcome {
  // No Project: the single statement returns no row, so nothing else is read either.
  if (!row) return { role: null, sessionScope: null, floorScope: null, pageScope: null };
  return {
    project: row.project,
    role: row.role ?? null,
    sessionScope:
      row.s_account_id === null ? null : { account_id: row.s_account_id, project_id: row.s_project_id! },
    floorScope:
      row.f_account_id === null
        ? null
        : { account_id: row.f_account_id, project_id: row.f_project_id!, session_id: row.f_session_id! },
    pageScope:
      row.pa_account_id === null
        ? null
        : {
            account_id: row.pa_account_id,
            project_id: row.pa_project_id!,
            session_id: row.pa_session_id!,
            floor_id: row.pa_floor_id!,
          },
    ...(row.entry && row.event_sequence !== null
      ? { entry: row.entry, eventSequence: Number(row.event_sequence) }
      : {}),
  };
}

export const derivedOutputWritesRepository = {
  /** See CREATE_WITH_JOURNAL: one round trip, one transaction. */
  async createWithJournal(
    db: Executor,
    input: CreateDerivedOutputStatement,
  ): Promise<CreateDerivedOutputOutcome> {
    const { writer, sources } = input;
    const parameters: unknown[] = [
      writer.accountId,
      writer.clientId,
      writer.clientIsDefault,
      input.projectId,
      sources.source_session_id,
      sources.source_floor_id,
      sources.source_page_id,
      [...input.writerRoles],
      ...ENTRY_COLUMNS.map(([c]) => input.entry[c]),
      ...LOG_COLUMNS.map(([c]) => input.log[c] ?? null),
      ...EVENT_COLUMNS.map(([c]) => input.event[c] ?? null),
    ];
    const result = await db.executeQuery<CreateWithJournalRow>(
      CompiledQuery.raw(CREATE_WITH_JOURNAL, parameters),
    );
    const row = result.rows[0];
    if (!row) return { role: null, sessionScope: null, floorScope: null, pageScope: null };
    const { role, ...project } = row.project;
    return {
      project,
      role: role ?? null,
      sessionScope: row.session_scope,
      floorScope: row.floor_scope,
      pageScope: row.page_scope,
      ...(row.entry && row.event_sequence !== null
        ? { entry: row.entry, eventSequence: Number(row.event_sequence) }
        : {}),
    };
  },

  /**
   * See CREATE_BATCH_WITH_JOURNAL: several creates (at most one per Project) in one round trip and
   * one transaction; the outcomes in the order of `inputs`, each what createWithJournal would
   * answer for it alone. Throws when the statement fails as a whole. `db` runs it by itself: the
   * pool, or the database's pipeline.
   */
  async createBatchWithJournal(
    db: StatementExecutor,
    writerRoles: readonly string[],
    inputs: readonly CreateDerivedOutputStatement[],
  ): Promise<CreateDerivedOutputOutcome[]> {
    const items = JSON.stringify(inputs.map((input, n) => batchItem(n, input)));
    const result = await db.executeQuery<CreateBatchRow>(
      CompiledQuery.raw(CREATE_BATCH_WITH_JOURNAL, [items, [...writerRoles]]),
    );
    const byItem: (CreateBatchRow | undefined)[] = new Array(inputs.length);
    for (const row of result.rows) byItem[row.n] = row;
    return Array.from(byItem, outcomeOf);
  },
};
