import type { Executor } from './database';
import type { ProjectEventRow } from './project-events.repository';

/** The Project events an agent run writes and finds again on a later attempt (its deliveries). */
const AGENT_WRITE_EVENT_TYPES = ['derived_output.created', 'inbox_entry.created'];

/**
 * Named queries of one `agent.run` attempt (RunAgentJobUseCase): its phase, the reads of its context
 * (the trigger event, the Project's latest events) and the writes an earlier attempt of the same job
 * already made. The job's state changes go through jobsRepository.
 */
export const agentRunsRepository = {
  /** Sets the phase of the attempt still holding the job; false when it no longer holds it. */
  async setPhase(
    db: Executor,
    input: { id: string; attempt: number; phase: string; now: number },
  ): Promise<boolean> {
    const result = await db
      .updateTable('jobs')
      .set({ phase: input.phase, updated_at: input.now })
      .where('id', '=', input.id)
      .where('status', '=', 'running')
      .where('attempt_count', '=', input.attempt)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  },

  /** One event of a Project (a run's trigger). */
  async findEvent(db: Executor, projectId: string, eventId: string): Promise<ProjectEventRow | undefined> {
    return db
      .selectFrom('project_events')
      .selectAll()
      .where('project_id', '=', projectId)
      .where('id', '=', eventId)
      .executeTakeFirst();
  },

  /** The last `limit` events of a Project of the given visibility levels, oldest first. */
  async latestEvents(
    db: Executor,
    input: { projectId: string; visibilities: ReadonlyArray<'project' | 'owner'>; limit: number },
  ): Promise<ProjectEventRow[]> {
    const rows = await db
      .selectFrom('project_events')
      .selectAll()
      .where('project_id', '=', input.projectId)
      .where('visibility', 'in', [...input.visibilities])
      .orderBy('sequence', 'desc')
      .limit(input.limit)
      .execute();
    return rows.reverse();
  },

  /**
   * The derived outputs and inbox entries a job already wrote (their `*.created` events carry the job
   * id as correlation id), oldest first: a later attempt of the job does not write them again.
   */
  async writesOfJob(
    db: Executor,
    input: { projectId: string; jobId: string },
  ): Promise<Array<Pick<ProjectEventRow, 'type' | 'payload'>>> {
    return db
      .selectFrom('project_events')
      .select(['type', 'payload'])
      .where('project_id', '=', input.projectId)
      .where('correlation_id', '=', input.jobId)
      .where('source', '=', 'runtime_job')
      .where('type', 'in', AGENT_WRITE_EVENT_TYPES)
      .orderBy('sequence', 'asc')
      .execute();
  },
};
