import { Inject, Injectable } from '@nestjs/common';
import { ProjectAccess, type Actor } from '@hearth/permissions';
import { inTransaction, sessionsRepository, type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { ProjectEventWriter } from '../events/project-event-writer';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import { lockActiveProject } from '../projects/project-guards';
import { requireSession, sessionRef } from './session-access';

/**
 * `DELETE /sessions/:id`: a hard delete (spec 2 knows no deleted status; sessions are `active` or
 * `archived`). The row goes, and with it everything that hangs off it by foreign key (floors, pages,
 * messages and session-scoped bindings once they exist). The Project stays, also a `session_default`
 * one, because its events, members and derived outputs outlive the session. Writes operation log
 * `delete_session` and Project event `session.deleted` in the same transaction. Needs
 * `project.session.write` on an active Project.
 */
@Injectable()
export class DeleteSessionUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: ProjectAccess,
    private readonly operationLogs: OperationLogWriter,
    private readonly events: ProjectEventWriter,
  ) {}

  async execute(actor: Actor, sessionId: string): Promise<{ id: string; deleted: true }> {
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
      await sessionsRepository.deleteSession(uow.tx, session.id);
      const log = await this.operationLogs.write(uow.tx, actor, {
        action: 'delete_session',
        account_id: session.account_id,
        workspace_id: session.workspace_id,
        project_id: session.project_id,
        session_id: session.id,
        target_type: 'session',
        target_id: session.id,
        before_ref: sessionRef(session),
      });
      await this.events.record(uow, {
        project,
        type: 'session.deleted',
        actor,
        session_id: session.id,
        operation_log_id: log.id,
        payload: { session_id: session.id, title: session.title, status: session.status },
      });
      return { id: session.id, deleted: true as const };
    });
  }
}
