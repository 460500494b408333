import { sql, type Insertable, type Selectable, type Updateable } from 'kysely';
import type { Executor, Tx } from './database';
import { CLAIMABLE_STATUSES, IN_FLIGHT_STATUSES, jobsRepository, type JobRow } from './jobs.repository';
import type { AgentBindingsTable, AgentTypesTable, JobStatus } from './tables';

export type AgentTypeRow = Selectable<AgentTypesTable>;
export type AgentBindingRow = Selectable<AgentBindingsTable>;
export type NewAgentTypeRow = Insertable<AgentTypesTable>;
export type NewAgentBindingRow = Insertable<AgentBindingsTable>;

/** The job name of every Agent Job (libs/platform/src/queue/jobs.ts). */
const AGENT_RUN = 'agent.run';

/** The claim's own condition (jobsRepository.claim), read off a row. */
const claimableAt = (
  job: Pick<JobRow, 'status' | 'available_at' | 'lease_expires_at' | 'attempt_count' | 'max_attempts'>,
  now: number,
): boolean =>
  (CLAIMABLE_STATUSES.includes(job.status) && (job.available_at === null || job.available_at <= now)) ||
  (IN_FLIGHT_STATUSES.includes(job.status) &&
    job.lease_expires_at !== null &&
    job.lease_expires_at < now &&
    job.attempt_count < job.max_attempts);

/**
 * Named queries for Agent Types, Agent Bindings and Agent Jobs (spec 1; migration 20261127100000).
 * Agent Jobs are `jobs` rows named `agent.run`: their state changes go through jobsRepository.
 */
export const agentsRepository = {
  /** Inserts a type; undefined when its key is already used in the Workspace. */
  async insertType(tx: Tx, row: NewAgentTypeRow): Promise<AgentTypeRow | undefined> {
    return tx
      .insertInto('agent_types')
      .values(row)
      .onConflict((oc) => oc.columns(['workspace_id', 'key']).doNothing())
      .returningAll()
      .executeTakeFirst();
  },

  async findType(db: Executor, workspaceId: string, id: string): Promise<AgentTypeRow | undefined> {
    return db
      .selectFrom('agent_types')
      .selectAll()
      .where('id', '=', id)
      .where('workspace_id', '=', workspaceId)
      .executeTakeFirst();
  },

  /** The type row locked for the transaction: `update` to change it, `share` to bind or run it. */
  async lockType(tx: Tx, id: string, mode: 'update' | 'share'): Promise<AgentTypeRow | undefined> {
    const query = tx.selectFrom('agent_types').selectAll().where('id', '=', id);
    return (mode === 'update' ? query.forUpdate() : query.forShare()).executeTakeFirst();
  },

  /** A Workspace's types in creation order. */
  async listTypes(db: Executor, workspaceId: string): Promise<AgentTypeRow[]> {
    return db
      .selectFrom('agent_types')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .orderBy('created_at', 'asc')
      .orderBy('id', 'asc')
      .execute();
  },

  /** Types by id (any Workspace): the types of a list of bindings. */
  async findTypesByIds(db: Executor, ids: string[]): Promise<AgentTypeRow[]> {
    if (ids.length === 0) return [];
    return db.selectFrom('agent_types').selectAll().where('id', 'in', ids).execute();
  },

  async updateType(tx: Tx, id: string, values: Updateable<AgentTypesTable>): Promise<AgentTypeRow> {
    return tx
      .updateTable('agent_types')
      .set(values)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
  },

  /** Bindings of a type (every Project), oldest first: to re-check them when its defaults change. */
  async listBindingsOfType(tx: Tx, agentTypeId: string): Promise<AgentBindingRow[]> {
    return tx
      .selectFrom('agent_bindings')
      .selectAll()
      .where('agent_type_id', '=', agentTypeId)
      .orderBy('created_at', 'asc')
      .orderBy('id', 'asc')
      .execute();
  },

  async countEnabledBindingsOfType(db: Executor, agentTypeId: string): Promise<number> {
    const row = await db
      .selectFrom('agent_bindings')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('agent_type_id', '=', agentTypeId)
      .where('status', '=', 'enabled')
      .executeTakeFirstOrThrow();
    return Number(row.n);
  },

  async insertBinding(tx: Tx, row: NewAgentBindingRow): Promise<AgentBindingRow> {
    return tx.insertInto('agent_bindings').values(row).returningAll().executeTakeFirstOrThrow();
  },

  async findBinding(db: Executor, projectId: string, id: string): Promise<AgentBindingRow | undefined> {
    return db
      .selectFrom('agent_bindings')
      .selectAll()
      .where('id', '=', id)
      .where('project_id', '=', projectId)
      .executeTakeFirst();
  },

  /** The binding row locked for the transaction: `update` to change it (default), `share` to run it. */
  async lockBinding(
    tx: Tx,
    projectId: string,
    id: string,
    mode: 'update' | 'share' = 'update',
  ): Promise<AgentBindingRow | undefined> {
    const query = tx
      .selectFrom('agent_bindings')
      .selectAll()
      .where('id', '=', id)
      .where('project_id', '=', projectId);
    return (mode === 'update' ? query.forUpdate() : query.forShare()).executeTakeFirst();
  },

  /** A Project's bindings in creation order. */
  async listBindings(db: Executor, projectId: string): Promise<AgentBindingRow[]> {
    return db
      .selectFrom('agent_bindings')
      .selectAll()
      .where('project_id', '=', projectId)
      .orderBy('created_at', 'asc')
      .orderBy('id', 'asc')
      .execute();
  },

  async updateBinding(tx: Tx, id: string, values: Updateable<AgentBindingsTable>): Promise<AgentBindingRow> {
    return tx
      .updateTable('agent_bindings')
      .set(values)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
  },

  /** A Project's Agent Jobs, newest first, optionally of one status; with the total of the filter. */
  async listJobs(
    db: Executor,
    projectId: string,
    input: { status?: JobStatus; limit: number; offset: number },
  ): Promise<{ items: JobRow[]; total: number }> {
    let query = db.selectFrom('jobs').where('project_id', '=', projectId).where('name', '=', AGENT_RUN);
    if (input.status) query = query.where('status', '=', input.status);
    const [items, count] = await Promise.all([
      query
        .selectAll()
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(input.limit)
        .offset(input.offset)
        .execute(),
      query.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { items, total: Number(count.n) };
  },

  async findJob(db: Executor, projectId: string, jobId: string): Promise<JobRow | undefined> {
    return db
      .selectFrom('jobs')
      .selectAll()
      .where('id', '=', jobId)
      .where('project_id', '=', projectId)
      .where('name', '=', AGENT_RUN)
      .executeTakeFirst();
  },

  /**
   * Claims an Agent Job for one attempt when no other job of its serial scope
   * (`<workspace>:<project>:<agent_type>`, spec 1) is in flight with a live lease. The scope's
   * transaction-level advisory lock orders concurrent claims, and the check runs after it is held,
   * so two workers never run one scope at once. Undefined when the job is not claimable;
   * `{busy: true}` when its scope is.
   */
  async claimInSerialScope(
    tx: Tx,
    input: { id: string; now: number; leaseMs: number },
  ): Promise<JobRow | { busy: true } | undefined> {
    const job = await tx
      .selectFrom('jobs')
      .select([
        'workspace_id',
        'project_id',
        'agent_type_id',
        'status',
        'available_at',
        'lease_expires_at',
        'attempt_count',
        'max_attempts',
      ])
      .where('id', '=', input.id)
      .where('name', '=', AGENT_RUN)
      .executeTakeFirst();
    // A job that could not be claimed anyway (finished, cancelled, not yet due, running elsewhere) is
    // answered as such before its scope is looked at: a stale delivery must not come back as "busy".
    if (!job || !claimableAt(job, input.now)) return undefined;
    const scope = `${job.workspace_id}:${job.project_id}:${job.agent_type_id}`;
    await sql`SELECT pg_advisory_xact_lock(hashtextextended(${scope}, 0))`.execute(tx);
    const busy = await tx
      .selectFrom('jobs')
      .select('id')
      .where('name', '=', AGENT_RUN)
      .where('project_id', '=', job.project_id)
      .where('agent_type_id', '=', job.agent_type_id)
      .where('status', 'in', ['leased', 'running'])
      .where('lease_expires_at', '>=', input.now)
      .where('id', '<>', input.id)
      .executeTakeFirst();
    if (busy) return { busy: true };
    return jobsRepository.claim(tx, {
      id: input.id,
      name: AGENT_RUN,
      now: input.now,
      leaseMs: input.leaseMs,
    });
  },
};
