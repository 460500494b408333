import { sql, type Insertable, type Selectable } from 'kysely';
import type { Executor, Tx } from './database';
import type { ProjectEventsTable } from './tables';

export type ProjectEventRow = Selectable<ProjectEventsTable>;
export type NewProjectEvent = Omit<Insertable<ProjectEventsTable>, 'sequence'>;

export const projectEventsRepository = {
  /**
   * Appends one event with the next sequence of its Project. The counter row is bumped in the same
   * statement and its row lock is held until the caller's transaction commits, so sequences are
   * gap-free (a rollback undoes the bump) and commit in sequence order within a Project. Call it
   * last in the transaction, to hold the lock briefly.
   */
  async append(tx: Tx, event: NewProjectEvent): Promise<ProjectEventRow> {
    const result = await sql<ProjectEventRow>`
      WITH counter AS (
        INSERT INTO project_event_counters AS c (project_id, last_sequence)
        VALUES (${event.project_id}, 1)
        ON CONFLICT (project_id) DO UPDATE SET last_sequence = c.last_sequence + 1
        RETURNING last_sequence
      )
      INSERT INTO project_events (
        id, workspace_id, project_id, sequence, type, visibility, source, actor_account_id, actor_client_id,
        session_id, branch_id, floor_id, page_id, message_id, operation_log_id, correlation_id,
        causation_event_id, payload, created_at
      )
      SELECT ${event.id}, ${event.workspace_id}, ${event.project_id}, counter.last_sequence, ${event.type},
        ${event.visibility}, ${event.source}, ${event.actor_account_id ?? null}, ${event.actor_client_id ?? null},
        ${event.session_id ?? null}, ${event.branch_id ?? null}, ${event.floor_id ?? null}, ${event.page_id ?? null},
        ${event.message_id ?? null}, ${event.operation_log_id ?? null}, ${event.correlation_id ?? null},
        ${event.causation_event_id ?? null}, ${event.payload}::jsonb, ${event.created_at}
      FROM counter
      RETURNING *
    `.execute(tx);
    return result.rows[0];
  },

  /**
   * Events after a sequence, in order, of the given visibility levels (keyset paging). `upTo`
   * bounds the range from above (a stream catching up to a known committed sequence).
   */
  async listAfter(
    db: Executor,
    query: {
      projectId: string;
      after: number;
      upTo?: number;
      visibilities: ReadonlyArray<'project' | 'owner'>;
      types?: string[];
      sessionId?: string;
      limit: number;
    },
  ): Promise<ProjectEventRow[]> {
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

  /** Whether a session belongs to a Project (the `session_id` filter of the event routes). */
  async sessionBelongsToProject(db: Executor, projectId: string, sessionId: string): Promise<boolean> {
    const row = await db
      .selectFrom('sessions')
      .select('id')
      .where('id', '=', sessionId)
      .where('project_id', '=', projectId)
      .executeTakeFirst();
    return row !== undefined;
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
