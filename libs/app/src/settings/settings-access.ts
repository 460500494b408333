import { Injectable } from '@nestjs/common';
import { DomainError } from '@hearth/domain';
import { ProjectAccess, type Actor, type ProjectGrant } from '@hearth/permissions';
import { projectsRepository, type Executor, type Tx } from '@hearth/persistence';
import { ensureProjectActive } from '../projects/project-guards';

/**
 * Who may read and write Project settings overrides (spec 1): `project.config.read` for every member,
 * `project.config.write` for the owner (others 403 `project_access_denied`), non-members 404
 * `project_not_found`. Every settings route of an archived Project answers 409 `project_archived`,
 * reads included, as derived outputs and the inbox do.
 */
@Injectable()
export class SettingsAccess {
  constructor(private readonly access: ProjectAccess) {}

  async forRead(actor: Actor, projectId: string, db?: Executor): Promise<ProjectGrant> {
    const grant = await this.access.require(actor, projectId, 'project.config.read', { db });
    ensureProjectActive(grant.project);
    return grant;
  }

  /**
   * For a write inside `tx`: the Project row is locked first for the update of its `settings_override`
   * that ends the write (`no_key_update`), so a concurrent archive, another settings write and the
   * Project's other writers (share lock, then the event counter) take turns instead of deadlocking.
   */
  async forWrite(actor: Actor, projectId: string, tx: Tx): Promise<ProjectGrant> {
    const grant = await this.access.require(actor, projectId, 'project.config.write', { db: tx });
    const project = await projectsRepository.lockProject(tx, grant.project.id, 'no_key_update');
    if (!project) throw new DomainError('project_not_found', 404, 'Project not found');
    ensureProjectActive(project);
    return { project, role: grant.role };
  }
}
