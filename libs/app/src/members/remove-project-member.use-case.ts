import { Inject, Injectable } from '@nestjs/common';
import { assertRemovableSubject, DomainError, requireSubjectType } from '@hearth/domain';
import { ProjectAccess, type Actor } from '@hearth/permissions';
import { inTransaction, membersRepository, type Db, type ProjectMemberRow } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { ProjectEventWriter } from '../events/project-event-writer';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import { resolveSubjectForRemove } from './member-subjects';

/**
 * `DELETE /projects/:id/members/:subject_type/:subject_id` and the legacy
 * `DELETE /projects/:id/members/:account_id` (owner only). The row is kept with status `removed`; the
 * subject loses access at once (ProjectAccess reads active rows on every request). Row, its
 * `project_member.remove` log and `project_member.removed` event (visibility owner): one transaction.
 */
@Injectable()
export class RemoveProjectMemberUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: ProjectAccess,
    private readonly logs: OperationLogWriter,
    private readonly events: ProjectEventWriter,
  ) {}

  async execute(
    actor: Actor,
    projectId: string,
    subjectType: string,
    subjectId: string,
  ): Promise<ProjectMemberRow> {
    const { project } = await this.access.require(actor, projectId, 'project.members.manage');
    const type = requireSubjectType(subjectType);
    assertRemovableSubject(
      project.account_id,
      await resolveSubjectForRemove(this.db, { subjectType: type, subjectId }),
    );
    return inTransaction(this.db, async (uow) => {
      const { tx } = uow;
      const member = await membersRepository.findActiveMemberForUpdate(tx, project.id, type, subjectId);
      if (!member)
        throw new DomainError(
          'project_member_not_found',
          404,
          'The subject is not an active member of this Project',
        );
      if (member.role === 'owner') {
        throw new DomainError(
          'project_member_owner_remove_not_supported',
          400,
          'The Project owner cannot be removed',
        );
      }
      const removed = await membersRepository.markRemoved(tx, member.id, Date.now());
      if (!removed)
        throw new DomainError(
          'project_member_not_found',
          404,
          'The subject is not an active member of this Project',
        );
      const log = await this.logs.write(tx, actor, {
        action: 'project_member.remove',
        account_id: project.account_id,
        workspace_id: project.workspace_id,
        project_id: project.id,
        target_type: 'project_member',
        target_id: removed.id,
        before_ref: { role: member.role, status: member.status },
        after_ref: { role: removed.role, status: removed.status },
        metadata: { role: removed.role, subject_type: removed.subject_type, subject_id: removed.subject_id },
      });
      await this.events.record(uow, {
        project,
        type: 'project_member.removed',
        visibility: 'owner',
        actor,
        operation_log_id: log.id,
        payload: {
          member_id: removed.id,
          role: removed.role,
          subject_type: removed.subject_type,
          subject_id: removed.subject_id,
          account_id: removed.account_id,
          client_id: removed.client_id,
        },
      });
      return removed;
    });
  }
}
