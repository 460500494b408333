import { Injectable } from '@nestjs/common';
import { INBOX_WRITE_NAMES, type InboxWriteAction } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import type { InboxEntryRow, ProjectRow, UnitOfWork } from '@hearth/persistence';
import { ProjectEventWriter } from '../events/project-event-writer';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import type { WriteOrigin } from '../events/write-origin';

const changedFields = (action: InboxWriteAction, entry: InboxEntryRow): string[] =>
  action === 'create'
    ? ['kind', 'title', 'body', 'status']
    : ['status', ...(entry.decision_reason === null ? [] : ['decision_reason'])];

/**
 * The record of one inbox write, in the write's transaction: the operation log
 * (`inbox_entry.create|decide`, metadata without the body) and the Project event
 * (`inbox_entry.created|decided`, visibility `project`, a summary without the body or the reason).
 * The event's wake-up is published after commit by the event writer.
 */
@Injectable()
export class InboxJournal {
  constructor(
    private readonly logs: OperationLogWriter,
    private readonly events: ProjectEventWriter,
  ) {}

  async record(
    uow: UnitOfWork,
    actor: Actor,
    project: ProjectRow,
    action: InboxWriteAction,
    entry: InboxEntryRow,
    /** A job's write (an Agent Job's delivery): event source, correlation, causation, log source type. */
    origin?: WriteOrigin,
  ) {
    const names = INBOX_WRITE_NAMES[action];
    const decision = entry.status === 'pending' ? null : entry.status;
    const sources = {
      source_session_id: entry.source_session_id,
      source_floor_id: entry.source_floor_id,
      source_page_id: entry.source_page_id,
      derived_output_id: entry.derived_output_id,
    };
    const log = await this.logs.write(uow.tx, actor, {
      action: names.log,
      account_id: project.account_id,
      workspace_id: project.workspace_id,
      project_id: project.id,
      session_id: entry.source_session_id,
      floor_id: entry.source_floor_id,
      target_type: 'inbox_entry',
      target_id: entry.id,
      before_ref: action === 'create' ? null : { status: 'pending' },
      after_ref: { kind: entry.kind, status: entry.status },
      diff: { changed_fields: changedFields(action, entry) },
      metadata:
        action === 'create'
          ? { body_byte_count: entry.body_byte_count, ...sources }
          : {
              decision,
              reason_char_count: entry.decision_reason === null ? null : [...entry.decision_reason].length,
            },
      ...(origin ? { source_type: origin.log_source_type } : {}),
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
      ...(origin
        ? {
            source: origin.source,
            correlation_id: origin.correlation_id,
            causation_event_id: origin.causation_event_id,
          }
        : {}),
      payload: {
        inbox_entry_id: entry.id,
        kind: entry.kind,
        status: entry.status,
        decision,
        created_by_account_id: entry.created_by_account_id,
        ...sources,
      },
    });
  }
}
