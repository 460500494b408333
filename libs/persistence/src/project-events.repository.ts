import { CompiledQuery, sql, type Insertable, type Selectable } from 'kysely';
import type { Executor, Tx } from './database';
import { preparedStatement } from './prepared-statements';
import { projectReadableBy, type ProjectSubject } from './projects.repository';
import type { ProjectEventsTable } from './tables';
import { columnNames, parameterSlots, PROJECT_EVENT_COLUMNS } from './typed-columns';

export type ProjectEventRow = Selectable<ProjectEventsTable>;
export type NewProjectEvent = Omit<Insertable<ProjectEventsTable>, 'sequence'>;

/** A keyset page of a Project's log (`listAfter`, `listStreamAfter`). */
export interface ProjectEventRange {
  projectId: string;
  after: number;
  upTo?: number;
  visibilities: ReadonlyArray<'project' | 'owner'>;
  types?: string[];
  sessionId?: string;
  limit: number;
}

/** The Project Event's fields, in the order of spec 1's table (and of the query items). */
const STREAM_EVENT_COLUMNS = [
  'id',
  'workspace_id',
  'project_id',
  'sequence',
  'type',
  'visibility',
  'source',
  'actor_account_id',
  'actor_client_id',
  'session_id',
  'branch_id',
  'floor_id',
  'page_id',
  'message_id',
  'operation_log_id',
  'correlation_id',
  'causation_event_id',
  'payload',
  'created_at',
] as const;

/** One event as the stream reads it: what it filters on, and the event's JSON text. */
export interface StreamEventRow {
  sequence: number;
  type: string;
  visibility: ProjectEventRow['visibility'];
  session_id: string | null;
  /** The event as JSON text (`row_to_json`), ready for the SSE `data:` line. */
  data: string;
}

/**
 * projectEventsRepository.append: the counter bump and the insert in one statement, prepared (parsed
 * and planned once per connection: every Project event goes through it). $1.. are the event's
 * columns in PROJECT_EVENT_COLUMNS' order.
 */
const APPEND_EVENT = preparedStatement(`
WITH counter AS (
  INSERT INTO project_event_counters AS c (project_id, last_sequence)
  VALUES ($${PROJECT_EVENT_COLUMNS.findIndex(([column]) => column === 'project_id') + 1}::text, 1)
  ON CONFLICT (project_id) DO UPDATE SET last_sequence = c.last_sequence + 1
  RETURNING last_sequence
)
INSERT INTO project_events (sequence, ${columnNames(PROJECT_EVENT_COLUMNS)})
SELECT counter.last_sequence, ${parameterSlots(PROJECT_EVENT_COLUMNS, 1)}
FROM counter
RETURNING ${STREAM_EVENT_COLUMNS.join(', ')}
`);

export const projectEventsRepository = {
  /**
   * Appends one event with the next sequence of its Project. The counter row is bumped in the same
   * statement and its row lock is held until the caller's transaction commits, so sequences are
   * gap-free (a rollback undoes the bump) and commit in sequence order within a Project. Call it
   * last in the transaction, to hold the lock briefly.
   */
  async append(tx: Tx, event: NewProjectEvent): Promise<ProjectEventRow> {
    const values = PROJECT_EVENT_COLUMNS.map(([column]) => event[column] ?? null);
    const result = await tx.executeQuery<ProjectEventRow>(CompiledQuery.raw(APPEND_EVENT, values));
    return result.rows[0];
  },

  /**
   * Events after a sequence, in order, of the given visibility levels (keyset paging). `upTo`
   * bounds the range from above (a stream catching up to a known committed sequence).
   */
  async listAfter(db: Executor, query: ProjectEventRange): Promise<ProjectEventRow[]> {
    let q = db
      .selectFrom('project_events')
      .selectAll()
      .where('project_id', '=', query.projectId)
      .where('sequence', '>', query.after)
      .where('visibility', 'in', [...query.visibilities]);
    if (query.upTo !== undefined) q = q.where('sequence', '<=', query.upTo);
    if (query.types && query.types.length > 0) q = q.where('type', 'in', query.types);
    if (query.sessionId) q = q.where('session_id', '=', query.sessionId);
    return q.orderBy('sequence', 'asc').limit(query.limit).execute();
  },

  /**
   * The same rows as `listAfter`, for the event stream: each event's JSON (the Project Event of
   * spec 1, fields in `STREAM_EVENT_COLUMNS` order) is built by Postgres, so the stream neither
   * parses the payload nor serialises anything per row.
   */
  async listStreamAfter(db: Executor, query: ProjectEventRange): Promise<StreamEventRow[]> {
    let inner = db
      .selectFrom('project_events')
      .select(STREAM_EVENT_COLUMNS)
      .where('project_id', '=', query.projectId)
      .where('sequence', '>', query.after)
      .where('visibility', 'in', [...query.visibilities]);
    if (query.upTo !== undefined) inner = inner.where('sequence', '<=', query.upTo);
    if (query.types && query.types.length > 0) inner = inner.where('type', 'in', query.types);
    if (query.sessionId) inner = inner.where('session_id', '=', query.sessionId);
    return db
      .selectFrom(inner.orderBy('sequence', 'asc').limit(query.limit).as('e'))
      .select([
        'e.sequence',
        'e.type',
        'e.visibility',
        'e.session_id',
        sql<string>`row_to_json(e)::text`.as('data'),
      ])
      .orderBy('e.sequence', 'asc')
      .execute();
  },

  /** Whether a session belongs to a Project (the `session_id` filter of the event routes). */
  async sessionBelongsToProject(db: Executor, projectId: string, sessionId: string): Promise<boolean> {
    const row = await db
      .selectFrom('sessions')
      .select('id')
      .where('id', '=', sessionId)
      .where('project_id', '=', projectId)
      .where('kind', '=', 'standard')
      .executeTakeFirst();
    return row !== undefined;
  },

  /**
   * Of the given Clients, those that are active and belong to an active account (the event
   * stream's re-check of its callers' credentials, one query for all of a Project's streams).
   */
  async activeClientIds(db: Executor, clientIds: readonly string[]): Promise<string[]> {
    if (clientIds.length === 0) return [];
    const rows = await db
      .selectFrom('clients as c')
      .innerJoin('accounts as a', 'a.id', 'c.account_id')
      .select('c.id')
      .where('c.id', 'in', [...clientIds])
      .where('c.status', '=', 'active')
      .where('a.status', '=', 'active')
      .execute();
    return rows.map((r) => r.id);
  },

  /**
   * Of the given Projects, those the subject can still read (`projectReadableBy`, the rule of
   * `ProjectAccess.roleOf` as SQL): the event stream's batched access re-check, one query per caller.
   */
  async readableProjectIds(
    db: Executor,
    subject: ProjectSubject,
    projectIds: readonly string[],
  ): Promise<string[]> {
    if (projectIds.length === 0) return [];
    const rows = await db
      .selectFrom('projects')
      .select('projects.id')
      .where('projects.id', 'in', [...projectIds])
      .where((eb) => projectReadableBy(eb, subject))
      .execute();
    return rows.map((r) => r.id);
  },

  async lastSequence(db: Executor, projectId: string): Promise<number> {
    const row = await db
      .selectFrom('project_event_counters')
      .select('last_sequence')
      .where('project_id', '=', projectId)
      .executeTakeFirst();
    return row?.last_sequence ?? 0;
  },
};
