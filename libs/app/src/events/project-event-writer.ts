import { Inject, Injectable } from '@nestjs/common';
import { ID_PREFIX, newId } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import {
  projectEventsRepository,
  type NewProjectEvent,
  type ProjectEventRow,
  type UnitOfWork,
} from '@hearth/persistence';
import { EVENT_BUS, type EventBus, LOGGER, type JsonLogger } from '@hearth/platform';

/** The Redis channel that wakes the SSE streams of one Project. The message is the new sequence. */
export const projectEventsChannel = (projectId: string) => `hearth:project-events:${projectId}`;

export interface ProjectEventInput {
  project: { id: string; workspace_id: string };
  type: string;
  visibility?: 'project' | 'owner' | 'internal';
  source?: 'api' | 'runtime_job' | 'migration' | 'system';
  actor?: Actor | null;
  session_id?: string | null;
  branch_id?: string | null;
  floor_id?: string | null;
  page_id?: string | null;
  message_id?: string | null;
  operation_log_id?: string | null;
  correlation_id?: string | null;
  causation_event_id?: string | null;
  /** A summary, never a full body. */
  payload: Record<string, unknown>;
}

/** What `wake` returns: the publish is not waited for. */
const DONE: Promise<void> = Promise.resolve();

/**
 * Writes Project events inside the caller's transaction and, once it commits, publishes a wake-up
 * on the bus. A failed publish is logged and never undoes the write: readers catch up from the log.
 */
@Injectable()
export class ProjectEventWriter {
  constructor(
    @Inject(EVENT_BUS) private readonly bus: EventBus,
    @Inject(LOGGER) private readonly logger: JsonLogger,
  ) {}

  async record(uow: UnitOfWork, input: ProjectEventInput): Promise<ProjectEventRow> {
    const event = await projectEventsRepository.append(uow.tx, this.row(input));
    uow.afterCommit(() => this.wake(event.project_id, event.sequence));
    return event;
  }

  /**
   * The row `record` appends (its sequence is given by the append), for a write that puts the event
   * in the database with its own statement; that write calls `wake` once it has committed.
   */
  row(input: ProjectEventInput): NewProjectEvent {
    return {
      id: newId(ID_PREFIX.event),
      workspace_id: input.project.workspace_id,
      project_id: input.project.id,
      type: input.type,
      visibility: input.visibility ?? 'project',
      source: input.source ?? 'api',
      actor_account_id: input.actor?.accountId ?? null,
      actor_client_id: input.actor?.clientId ?? null,
      session_id: input.session_id ?? null,
      branch_id: input.branch_id ?? null,
      floor_id: input.floor_id ?? null,
      page_id: input.page_id ?? null,
      message_id: input.message_id ?? null,
      operation_log_id: input.operation_log_id ?? null,
      correlation_id: input.correlation_id ?? null,
      causation_event_id: input.causation_event_id ?? null,
      payload: JSON.stringify(input.payload),
      created_at: Date.now(),
    };
  }

  /**
   * The wake-up of a committed event: the publish is sent at once, and the returned promise does
   * not wait for Redis to acknowledge it, so an answer is not held back by the bus (one Redis round
   * trip less per write; a slow or unreachable Redis no longer stalls writes that have committed).
   * A failure is still logged, never thrown: readers catch up from the log on their next wake-up
   * or poll. The publish is sent when `wake` is called: after the commit, before the answer (on the
   * Redis bus the wake-ups made in one microtask run, e.g. of one group-committed batch, leave
   * together in one pipeline, see RedisEventBus.publish).
   */
  wake(projectId: string, sequence: number): Promise<void> {
    let published: Promise<void>;
    try {
      published = this.bus.publish(projectEventsChannel(projectId), String(sequence));
    } catch (error) {
      published = Promise.reject(error);
    }
    published.then(undefined, (error: unknown) =>
      this.logger.warn(
        {
          msg: 'event wake-up publish failed; readers will catch up',
          project_id: projectId,
          error: String(error),
        },
        'ProjectEventWriter',
      ),
    );
    return DONE;
  }
}
