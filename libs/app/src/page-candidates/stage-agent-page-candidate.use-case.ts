import { Inject, Injectable } from '@nestjs/common';
import { ID_PREFIX, newId, type CandidateMessage } from '@hearth/domain';
import { ProjectAccess, type Actor } from '@hearth/permissions';
import {
  floorsRepository,
  inTransaction,
  pageStagedWritesRepository,
  sessionsRepository,
  type Db,
  type PageStagedWriteRow,
} from '@hearth/persistence';
import { DB } from '@hearth/platform';
import type { WriteOrigin } from '../events/write-origin';
import { ProjectEventWriter } from '../events/project-event-writer';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import { lockActiveProject } from '../projects/project-guards';

export interface AgentPageCandidateInput {
  projectId: string;
  /** The job's floor: the candidate goes to its active reply page. */
  floorId: string;
  messages: CandidateMessage[];
  reason: string;
  /** The Agent Job writing it. */
  jobId: string;
  origin: WriteOrigin;
}

/**
 * An agent run's `page_staged_write` delivery (docs/decisions.md "Page candidates"): the run's output
 * staged as a candidate for the active reply page (output or greeting) of the job's floor, a row of
 * `page_staged_writes` (status `staged`; the page itself is not changed), with its operation log
 * `page_staged_write.create` (source_type `job`) and Project event `page_staged_write.created` in one
 * transaction. The writer needs what a derived output needs (`project.derived_output.write`, an active
 * Project). `undefined` when the floor is not a committed floor of the Project's sessions or has no
 * reply page: the run lists the target as skipped (`no_target_page`). A job writes at most one
 * candidate: a retried attempt gets the one an earlier attempt wrote.
 */
@Injectable()
export class StageAgentPageCandidateUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: ProjectAccess,
    private readonly logs: OperationLogWriter,
    private readonly events: ProjectEventWriter,
  ) {}

  async execute(actor: Actor, input: AgentPageCandidateInput): Promise<PageStagedWriteRow | undefined> {
    const earlier = await pageStagedWritesRepository.findOfJob(this.db, input.jobId);
    if (earlier) return earlier;
    return inTransaction(this.db, async (uow) => {
      const { tx } = uow;
      const grant = await this.access.require(actor, input.projectId, 'project.derived_output.write', {
        db: tx,
      });
      const project = await lockActiveProject(tx, grant.project.id);
      const floor = await floorsRepository.findFloorOfAccount(tx, project.account_id, input.floorId);
      // Key-share locked: a session delete running meanwhile waits for the candidate, or came first.
      const session = floor && (await sessionsRepository.findSessionForKeyShare(tx, floor.session_id));
      if (!floor || session?.project_id !== project.id) return undefined;
      const page = await pageStagedWritesRepository.activeOutputPageOfFloor(tx, floor.id);
      if (!page) return undefined;
      const row = await pageStagedWritesRepository.insert(tx, {
        id: newId(ID_PREFIX.pageStagedWrite),
        account_id: project.account_id,
        project_id: project.id,
        session_id: floor.session_id,
        target_page_id: page.id,
        source_kind: 'agent_job',
        source_conversation_id: null,
        source_page_id: null,
        source_job_id: input.jobId,
        target: 'page_staged_write',
        status: 'staged',
        reason: input.reason,
        content: JSON.stringify(input.messages),
        created_by_client_id: actor.clientId,
        created_at: Date.now(),
      });
      const log = await this.logs.write(tx, actor, {
        action: 'page_staged_write.create',
        account_id: project.account_id,
        workspace_id: project.workspace_id,
        project_id: project.id,
        session_id: floor.session_id,
        floor_id: floor.id,
        target_type: 'page_staged_write',
        target_id: row.id,
        before_ref: null,
        after_ref: { status: row.status, target_page_id: page.id },
        diff: null,
        metadata: {
          source_kind: 'agent_job',
          source_job_id: input.jobId,
          message_count: input.messages.length,
          reason_length: [...input.reason].length,
        },
        source_type: input.origin.log_source_type,
      });
      await this.events.record(uow, {
        project,
        type: 'page_staged_write.created',
        visibility: 'project',
        actor,
        session_id: floor.session_id,
        floor_id: floor.id,
        page_id: page.id,
        operation_log_id: log.id,
        source: input.origin.source,
        correlation_id: input.origin.correlation_id,
        causation_event_id: input.origin.causation_event_id,
        payload: {
          staged_write_id: row.id,
          target_page_id: page.id,
          source_kind: 'agent_job',
          message_count: input.messages.length,
        },
      });
      return row;
    });
  }
}
