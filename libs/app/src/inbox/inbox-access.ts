import { Injectable } from '@nestjs/common';
import { DomainError } from '@hearth/domain';
import { ProjectAccess, type Actor, type ProjectGrant } from '@hearth/permissions';
import { projectsRepository, type Executor, type Tx } from '@hearth/persistence';
import { ensureProjectActive } from '../projects/project-guards';

/**
 * Who may do what on the Project inbox (spec 1 "Access by role"): every member reads
 * (`project.read`), owner and deriver create (`project.inbox.create`), only the owner decides
 * (`project.inbox.decide`); a role without the capability gets 403 `project_access_denied`,
 * non-members 404 `project_not_found`. Every inbox route of an archived Project answers 409
 * `project_archived`, reads included, like derived outputs.
 */
@Injectable()
export class InboxAccess {
  constructor(private readonly access: ProjectAccess) {}

  async forRead(actor: Actor, projectId: string, db?: Executor): Promise<ProjectGrant> {
    const grant = await this.access.require(actor, projectId, 'project.read', { db });
    ensureProjectActive(grant.project);
    return grant;
  }

  /**
   * For a write inside `tx`: the Project row is share-locked, so a concurrent archive either commits
   * first (and this write sees `archived`) or waits until this write has committed.
   */
  async forWrite(
    actor: Actor,
    projectId: string,
    capability: 'project.inbox.create' | 'project.inbox.decide',
    tx: Tx,
  ): Promise<ProjectGrant> {
    const grant = await this.access.require(actor, projectId, capability, { db: tx });
    const project = await projectsRepository.lockProject(tx, grant.project.id, 'share');
    if (!project) throw new DomainError('project_not_found', 404, 'Project not found');
    ensureProjectActive(project);
    return { project, role: grant.role };
  }
}

export const inboxEntryNotFound = () =>
  new DomainError('inbox_entry_not_found', 404, 'Inbox entry not found');
