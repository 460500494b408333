import { Inject, Injectable } from '@nestjs/common';
import { ID_PREFIX, newId } from '@hearth/domain';
import { jobsRepository, type JobRow, type UnitOfWork } from '@hearth/persistence';
import {
  enqueueLedgerJob,
  JOB_DEFINITIONS,
  JOB_QUEUE,
  type JobQueue,
  type LedgerJobName,
  LOGGER,
  type JsonLogger,
} from '@hearth/platform';

export interface CreateJobInput {
  name: LedgerJobName;
  /** The job's input: ids and small options only, never secrets or message bodies. */
  payload?: Record<string, unknown>;
  account_id?: string | null;
  workspace_id?: string | null;
  project_id?: string | null;
  /** A second create with the same key returns the existing job (`created: false`). */
  dedupe_key?: string | null;
  max_attempts?: number;
  phase?: string | null;
  /** Not before this time (ms). */
  available_at?: number | null;
  /** `agent.run` only (spec 1 "Agent Job"): the type and binding run, null for other jobs. */
  agent_type_id?: string | null;
  agent_binding_id?: string | null;
  /** The Project event that triggered the run; null for a manual run. */
  source_event_id?: string | null;
  /** `event` or `manual`. */
  trigger_type?: string | null;
  dry_run?: boolean | null;
  /** The output targets the run may write (the binding's effective `allowed_output_targets`). */
  delivery_targets?: string[] | null;
}

export interface CreateJobResult {
  job: JobRow;
  created: boolean;
}

/**
 * Writes a `pending` job row in the caller's transaction and enqueues it after commit. The row is
 * the truth: when the enqueue fails (Redis down) the caller still succeeds and the reconciler
 * enqueues the row later.
 */
@Injectable()
export class CreateJobUseCase {
  constructor(
    @Inject(JOB_QUEUE) private readonly queue: JobQueue,
    @Inject(LOGGER) private readonly logger: JsonLogger,
  ) {}

  async execute(uow: UnitOfWork, input: CreateJobInput): Promise<CreateJobResult> {
    const definition = JOB_DEFINITIONS[input.name];
    const now = Date.now();
    const inserted = await jobsRepository.insertPending(uow.tx, {
      id: newId(ID_PREFIX.job),
      name: input.name,
      queue: definition.queue,
      phase: input.phase ?? null,
      account_id: input.account_id ?? null,
      workspace_id: input.workspace_id ?? null,
      project_id: input.project_id ?? null,
      payload: JSON.stringify(input.payload ?? {}),
      result: null,
      dedupe_key: input.dedupe_key ?? null,
      max_attempts: input.max_attempts ?? definition.maxAttempts,
      available_at: input.available_at ?? null,
      started_at: null,
      finished_at: null,
      last_error: null,
      last_error_code: null,
      last_error_class: null,
      created_at: now,
      updated_at: now,
      agent_type_id: input.agent_type_id ?? null,
      agent_binding_id: input.agent_binding_id ?? null,
      source_event_id: input.source_event_id ?? null,
      trigger_type: input.trigger_type ?? null,
      dry_run: input.dry_run ?? null,
      delivery_targets:
        input.delivery_targets === undefined || input.delivery_targets === null
          ? null
          : JSON.stringify(input.delivery_targets),
    });
    if (!inserted) {
      const existing = input.dedupe_key
        ? await jobsRepository.findByDedupeKey(uow.tx, input.dedupe_key)
        : undefined;
      if (!existing) throw new Error('The job insert was skipped but no job holds its dedupe key');
      return { job: existing, created: false };
    }
    const delayMs = inserted.available_at ? Math.max(0, inserted.available_at - now) : 0;
    uow.afterCommit(() =>
      enqueueLedgerJob(this.queue, input.name, inserted.id, delayMs).catch((error) =>
        this.logger.warn(
          {
            msg: 'job enqueue failed; the reconciler will enqueue it',
            job_id: inserted.id,
            name: input.name,
            error: String(error),
          },
          'CreateJob',
        ),
      ),
    );
    return { job: inserted, created: true };
  }
}
