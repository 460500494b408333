import { Inject, Injectable } from '@nestjs/common';
import { DomainError, validationError } from '@hearth/domain';
import { ProjectAccess, type Actor } from '@hearth/permissions';
import {
  inTransaction,
  sessionsRepository,
  type Db,
  type SessionRow,
  type SessionsTable,
} from '@hearth/persistence';
import type { Updateable } from 'kysely';
import { DB } from '@hearth/platform';
import { ProjectEventWriter } from '../events/project-event-writer';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import { lockActiveProject } from '../projects/project-guards';
import { BINDING_FIELDS, requireSession, sessionRef, type SessionBindingsInput } from './session-access';
import { resolveSessionBindings } from './session-bindings';

export interface UpdateSessionInput extends SessionBindingsInput {
  title?: string;
  status?: SessionRow['status'];
}

/**
 * `PATCH /sessions/:id`: title, status (`active`/`archived`) and the binding ids; needs
 * `project.session.write` on an active Project. Only fields that change are written; a PATCH that
 * changes nothing writes nothing. An archived session only accepts going back to `active` (with or
 * without other fields); any other change answers 409 `session_archived`. Every change writes
 * operation log `update_session`; archiving also writes Project event `session.archived`, in the same
 * transaction (the wake-up is published after commit).
 */
@Injectable()
export class UpdateSessionUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: ProjectAccess,
    private readonly operationLogs: OperationLogWriter,
    private readonly events: ProjectEventWriter,
  ) {}

  async execute(actor: Actor, sessionId: string, input: UpdateSessionInput): Promise<SessionRow> {
    const fields = ['title', 'status', 'worldbook_ids', ...BINDING_FIELDS] as const;
    if (fields.every((field) => input[field] === undefined)) {
      throw validationError(`Send at least one of ${fields.join(', ')}`, { fields: [] });
    }
    return inTransaction(this.db, async (uow) => {
      const { session, project } = await requireSession(
        this.access,
        uow.tx,
        actor,
        sessionId,
        'project.session.write',
        {
          lock: true,
        },
      );
      await lockActiveProject(uow.tx, project.id);

      const bindings = await resolveSessionBindings(uow.tx, session.account_id, {
        ...Object.fromEntries(BINDING_FIELDS.map((field) => [field, input[field]])),
        worldbook_ids: input.worldbook_ids,
      });
      const changes: Updateable<SessionsTable> = {};
      const changed: string[] = [];
      if (input.title !== undefined && input.title !== session.title) {
        changes.title = input.title;
        changed.push('title');
      }
      if (input.status !== undefined && input.status !== session.status) {
        changes.status = input.status;
        changed.push('status');
      }
      for (const field of BINDING_FIELDS) {
        const value = bindings[field];
        if (value !== undefined && value !== session[field]) {
          changes[field] = value;
          changed.push(field);
        }
      }
      if (
        bindings.worldbook_ids !== undefined &&
        JSON.stringify(bindings.worldbook_ids) !== JSON.stringify(session.worldbook_ids)
      ) {
        changes.worldbook_ids = JSON.stringify(bindings.worldbook_ids);
        changed.push('worldbook_ids');
      }
      if (changed.length === 0) return session;

      const nextStatus = input.status ?? session.status;
      if (session.status === 'archived' && nextStatus === 'archived') {
        throw new DomainError(
          'session_archived',
          409,
          'The session is archived; set status to active to change it',
        );
      }
      const now = Date.now();
      const archiving = session.status === 'active' && nextStatus === 'archived';
      if (archiving) changes.archived_at = now;
      if (session.status === 'archived' && nextStatus === 'active') changes.archived_at = null;
      changes.updated_at = now;

      const updated = await sessionsRepository.updateSession(uow.tx, session.id, changes);
      const log = await this.operationLogs.write(uow.tx, actor, {
        action: 'update_session',
        account_id: session.account_id,
        workspace_id: session.workspace_id,
        project_id: session.project_id,
        session_id: session.id,
        target_type: 'session',
        target_id: session.id,
        before_ref: sessionRef(session),
        after_ref: sessionRef(updated),
        metadata: { changed_fields: changed },
      });
      if (archiving) {
        await this.events.record(uow, {
          project,
          type: 'session.archived',
          actor,
          session_id: session.id,
          operation_log_id: log.id,
          payload: {
            session_id: session.id,
            title: updated.title,
            status: updated.status,
            changed_fields: changed,
          },
        });
      }
      return updated;
    });
  }
}
