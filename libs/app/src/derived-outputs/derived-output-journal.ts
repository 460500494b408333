import { Injectable } from '@nestjs/common';
import { DERIVED_OUTPUT_WRITE_NAMES, type DerivedOutputWriteAction } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import type {
  DerivedOutputRow,
  ProjectRow,
  ProjectScopedEvent,
  ProjectScopedLog,
  UnitOfWork,
} from '@hearth/persistence';
import { ProjectEventWriter, type ProjectEventInput } from '../events/project-event-writer';
import { OperationLogWriter, type OperationLogInput } from '../operation-logs/operation-log-writer';
import type { WriteOrigin } from '../events/write-origin';

/** What the journal tells about an entry (a stored row, or one about to be inserted). */
export type JournalEntry = Pick<
  DerivedOutputRow,
  | 'id'
  | 'domain'
  | 'status'
  | 'owner_account_id'
  | 'source_session_id'
  | 'source_floor_id'
  | 'source_page_id'
  | 'value_byte_count'
>;

type JournalProject = Pick<ProjectRow, 'id' | 'account_id' | 'workspace_id'>;

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
    entry: JournalEntry,
    changedFields: string[],
    previousStatus: DerivedOutputRow['status'] | null,
  ): Promise<void> {
    const inputs = this.inputs(project, action, entry, changedFields, previousStatus);
    const log = await this.logs.write(uow.tx, actor, inputs.log);
    await this.events.record(uow, { ...inputs.event, actor, operation_log_id: log.id });
  }

  /**
   * The same log and event as `record`, as rows for a write that inserts them in its own statement
   * together with the Project row read: the Project's account, Workspace and id are taken from that
   * row by the statement (derivedOutputWritesRepository), so they are left out here. The caller
   * wakes the event's readers once the statement has committed (ProjectEventWriter.wake). `origin`:
   * a job's write (event source, correlation and causation, log source type).
   */
  projectScopedRows(
    actor: Actor,
    projectId: string,
    action: DerivedOutputWriteAction,
    entry: JournalEntry,
    changedFields: string[],
    previousStatus: DerivedOutputRow['status'] | null,
    origin?: WriteOrigin,
  ): { log: ProjectScopedLog; event: ProjectScopedEvent } {
    const project = { id: projectId, account_id: actor.accountId, workspace_id: '' };
    const inputs = this.inputs(project, action, entry, changedFields, previousStatus);
    const {
      account_id: _account,
      workspace_id: _workspace,
      project_id: _project,
      ...log
    } = this.logs.row(actor, origin ? { ...inputs.log, source_type: origin.log_source_type } : inputs.log);
    const {
      workspace_id: _eventWorkspace,
      project_id: _eventProject,
      ...event
    } = this.events.row({
      ...inputs.event,
      actor,
      operation_log_id: log.id,
      ...(origin
        ? {
            source: origin.source,
            correlation_id: origin.correlation_id,
            causation_event_id: origin.causation_event_id,
          }
        : {}),
    });
    return { log, event };
  }

  private inputs(
    project: JournalProject,
    action: DerivedOutputWriteAction,
    entry: JournalEntry,
    changedFields: string[],
    previousStatus: DerivedOutputRow['status'] | null,
  ): { log: OperationLogInput; event: Omit<ProjectEventInput, 'actor' | 'operation_log_id'> } {
    const names = DERIVED_OUTPUT_WRITE_NAMES[action];
    return {
      log: {
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
      },
      event: {
        project,
        type: names.event,
        visibility: 'project',
        session_id: entry.source_session_id,
        floor_id: entry.source_floor_id,
        page_id: entry.source_page_id,
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
      },
    };
  }
}
