import { Injectable } from '@nestjs/common';
import { DERIVED_OUTPUT_WRITE_NAMES, type DerivedOutputWriteAction } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import type { DerivedOutputRow, ProjectRow, UnitOfWork } from '@hearth/persistence';
import { ProjectEventWriter } from '../events/project-event-writer';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';

/**
 * The record of one derived output write, in the write's transaction (spec 1 "Events"): the operation
 * log (`derived_output.create|update|archive`, metadata `value_byte_count` only) and the Project event
 * (`derived_output.created|updated|archived`, a summary without the value). The event's wake-up is
 * published after commit by the event writer.
 */
@Injectable()
export class DerivedOutputJournal {
  constructor(
    private readonly logs: OperationLogWriter,
    private readonly events: ProjectEventWriter,
  ) {}

  async record(
    uow: UnitOfWork,
    actor: Actor,
    project: ProjectRow,
    action: DerivedOutputWriteAction,
    entry: DerivedOutputRow,
    changedFields: string[],
    previousStatus: DerivedOutputRow['status'] | null,
  ): Promise<void> {
    const names = DERIVED_OUTPUT_WRITE_NAMES[action];
    const log = await this.logs.write(uow.tx, actor, {
      action: names.log,
      account_id: project.account_id,
      workspace_id: project.workspace_id,
      project_id: project.id,
      session_id: entry.source_session_id,
      floor_id: entry.source_floor_id,
      target_type: 'derived_output',
      target_id: entry.id,
      before_ref: previousStatus === null ? null : { status: previousStatus },
      after_ref: { domain: entry.domain, status: entry.status },
      diff: { changed_fields: changedFields },
      metadata: { value_byte_count: entry.value_byte_count },
    });
    await this.events.record(uow, {
      project,
      type: names.event,
      visibility: 'project',
      actor,
      session_id: entry.source_session_id,
      floor_id: entry.source_floor_id,
      page_id: entry.source_page_id,
      operation_log_id: log.id,
      payload: {
        derived_output_id: entry.id,
        domain: entry.domain,
        status: entry.status,
        owner_account_id: entry.owner_account_id,
        source_session_id: entry.source_session_id,
        source_floor_id: entry.source_floor_id,
        source_page_id: entry.source_page_id,
        changed_fields: changedFields,
      },
    });
  }
}
