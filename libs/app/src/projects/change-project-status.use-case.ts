import { Inject, Injectable } from '@nestjs/common';
import { DomainError } from '@hearth/domain';
import { ProjectAccess, type Actor, type ProjectGrant } from '@hearth/permissions';
import { inTransaction, projectsRepository, type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import { ProjectEventWriter } from '../events/project-event-writer';

const TRANSITIONS = {
  archived: { action: 'archive_project', event: 'project.archived' },
  active: { action: 'restore_project', event: 'project.restored' },
} as const;

/**
 * `POST /projects/:id/archive` and `/restore` (owner only, `project.manage`; other members 403
 * `project_access_denied`, non-members 404 `project_not_found`): moves the Project to `archived` or back to
 * `active`, with operation log `archive_project` / `restore_project` and Project event `project.archived` /
 * `project.restored` (visibility `project`) in one transaction. A Project already in the target status is
 * answered as it is, with nothing written (idempotent). The Project row is locked first, so concurrent calls
 * record the transition once.
 */
@Injectable()
export class ChangeProjectStatusUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: ProjectAccess,
    private readonly logs: OperationLogWriter,
    private readonly events: ProjectEventWriter,
  ) {}

  async execute(actor: Actor, projectId: string, target: 'archived' | 'active'): Promise<ProjectGrant> {
    const transition = TRANSITIONS[target];
    return inTransaction(this.db, async (uow) => {
      const { role } = await this.access.require(actor, projectId, 'project.manage', { db: uow.tx });
      const project = await projectsRepository.lockProject(uow.tx, projectId, 'update');
      if (!project) throw new DomainError('project_not_found', 404, 'Project not found');
      if (project.status === target) return { project, role };
      const changed = await projectsRepository.updateProjectStatus(uow.tx, project.id, target);
      if (!changed) throw new Error(`Project ${project.id} vanished while locked`);
      const log = await this.logs.write(uow.tx, actor, {
        action: transition.action,
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
        type: transition.event,
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
