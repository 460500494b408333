import { Inject, Injectable } from '@nestjs/common';
import { DomainError } from '@hearth/domain';
import { ProjectAccess, type Actor, type ProjectGrant } from '@hearth/permissions';
import { inTransaction, projectsRepository, type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import { ProjectEventWriter } from '../events/project-event-writer';

/**
 * `POST /projects/:id/archive` (owner only, `project.manage`; other members 403
 * `project_access_denied`, non-members 404 `project_not_found`): moves the Project from `active` to
 * `archived`, with operation log `archive_project` and Project event `project.archived` (visibility `project`) in
 * one transaction. A Project already `archived` is answered as it is, with nothing written (idempotent).
 * The Project row is locked first, so concurrent calls record the transition once.
 */
@Injectable()
export class ArchiveProjectUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: ProjectAccess,
    private readonly logs: OperationLogWriter,
    private readonly events: ProjectEventWriter,
  ) {}

  async execute(actor: Actor, projectId: string): Promise<ProjectGrant> {
    return inTransaction(this.db, async (uow) => {
      const { role } = await this.access.require(actor, projectId, 'project.manage', { db: uow.tx });
      const project = await projectsRepository.lockProject(uow.tx, projectId, 'update');
      if (!project) throw new DomainError('project_not_found', 404, 'Project not found');
      if (project.status === 'archived') return { project, role };
      const changed = await projectsRepository.updateProjectStatus(uow.tx, project.id, 'archived');
      if (!changed) throw new Error(`Project ${project.id} vanished while locked`);
      const log = await this.logs.write(uow.tx, actor, {
        action: 'archive_project',
        account_id: project.account_id,
        workspace_id: project.workspace_id,
        project_id: project.id,
        target_type: 'project',
        target_id: project.id,
        before_ref: { status: project.status },
        after_ref: { status: changed.status },
      });
      await this.events.record(uow, {
        project,
        type: 'project.archived',
        visibility: 'project',
        actor,
        operation_log_id: log.id,
        payload: {
          project_id: project.id,
          kind: project.kind,
          status: changed.status,
          previous_status: project.status,
        },
      });
      return { project: changed, role };
    });
  }
}
