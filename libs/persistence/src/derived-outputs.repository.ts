import { CompiledQuery, type Insertable, type Selectable, type Updateable } from 'kysely';
import type { Executor, Tx } from './database';
import type { NewOperationLog } from './operation-logs.repository';
import type { NewProjectEvent } from './project-events.repository';
import { preparedStatement } from './prepared-statements';
import type { ProjectMemberRow, ProjectRow } from './projects.repository';
import type { DerivedOutputsTable } from './tables';

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
 * account, Project and session a floor or page lives in (through its session).
 */
export const derivedOutputSourcesRepository = {
  async findFloorScope(db: Executor, floorId: string): Promise<SourceScope | undefined> {
    return db
      .selectFrom('floors')
      .innerJoin('sessions', 'sessions.id', 'floors.session_id')
      .select(['floors.account_id', 'sessions.project_id', 'floors.session_id'])
      .where('floors.id', '=', floorId)
      .executeTakeFirst();
  },

  async findPageScope(db: Executor, pageId: string): Promise<SourceScope | undefined> {
    return db
      .selectFrom('pages')
      .innerJoin('sessions', 'sessions.id', 'pages.session_id')
      .select(['pages.account_id', 'sessions.project_id', 'pages.session_id', 'pages.floor_id'])
      .where('pages.id', '=', pageId)
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

const LOG_COLUMNS = [
  ['id', 'text'],
  ['actor_type', 'text'],
  ['actor_id', 'text'],
  ['actor_account_id', 'text'],
  ['operation_group_id', 'text'],
  ['request_id', 'text'],
  ['source_type', 'text'],
  ['action', 'text'],
  ['status', 'text'],
  ['session_id', 'text'],
  ['branch_id', 'text'],
  ['floor_id', 'text'],
  ['run_id', 'text'],
  ['target_type', 'text'],
  ['target_id', 'text'],
  ['before_ref', 'jsonb'],
  ['after_ref', 'jsonb'],
  ['diff', 'jsonb'],
  ['metadata', 'jsonb'],
  ['created_at', 'bigint'],
] as const satisfies ReadonlyArray<readonly [keyof ProjectScopedLog, string]>;

const EVENT_COLUMNS = [
  ['id', 'text'],
  ['type', 'text'],
  ['visibility', 'text'],
  ['source', 'text'],
  ['actor_account_id', 'text'],
  ['actor_client_id', 'text'],
  ['session_id', 'text'],
  ['branch_id', 'text'],
  ['floor_id', 'text'],
  ['page_id', 'text'],
  ['message_id', 'text'],
  ['operation_log_id', 'text'],
  ['correlation_id', 'text'],
  ['causation_event_id', 'text'],
  ['payload', 'jsonb'],
  ['created_at', 'bigint'],
] as const satisfies ReadonlyArray<readonly [keyof ProjectScopedEvent, string]>;

/** $1..$8: writer account, Client, is-default, Project id, source session, floor, page, writer roles. */
const FIXED_PARAMETERS = 8;
const slots = (columns: ReadonlyArray<readonly [string, string]>, first: number) =>
  columns.map(([, type], i) => `$${first + i}::${type}`).join(', ');
const names = (columns: ReadonlyArray<readonly [string, string]>) => columns.map(([c]) => c).join(', ');
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
  SELECT account_id, project_id FROM sessions WHERE id = $5::text
),
f AS (
  SELECT fl.account_id, se.project_id, fl.session_id
  FROM floors fl JOIN sessions se ON se.id = fl.session_id
  WHERE fl.id = $6::text
),
pa AS (
  SELECT pg.account_id, se.project_id, pg.session_id, pg.floor_id
  FROM pages pg JOIN sessions se ON se.id = pg.session_id
  WHERE pg.id = $7::text
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
    source_page_id, ${names(ENTRY_COLUMNS)})
  SELECT ok.workspace_id, ok.id, ok.account_id, $5::text, $6::text, $7::text, ${slots(ENTRY_COLUMNS, ENTRY_FIRST)}
  FROM ok
  RETURNING *
),
log AS (
  INSERT INTO operation_logs (account_id, workspace_id, project_id, ${names(LOG_COLUMNS)})
  SELECT ok.account_id, ok.workspace_id, ok.id, ${slots(LOG_COLUMNS, LOG_FIRST)}
  FROM ok
),
counter AS (
  INSERT INTO project_event_counters AS c (project_id, last_sequence)
  SELECT ok.id, 1 FROM ok
  ON CONFLICT (project_id) DO UPDATE SET last_sequence = c.last_sequence + 1
  RETURNING project_id, last_sequence
),
event AS (
  INSERT INTO project_events (workspace_id, project_id, sequence, ${names(EVENT_COLUMNS)})
  SELECT ok.workspace_id, ok.id, counter.last_sequence, ${slots(EVENT_COLUMNS, EVENT_FIRST)}
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
};
