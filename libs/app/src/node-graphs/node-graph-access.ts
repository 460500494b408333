import { Injectable } from '@nestjs/common';
import { DomainError } from '@hearth/domain';
import { ProjectAccess, type Actor, type ProjectGrant } from '@hearth/permissions';
import { projectsRepository, type Executor, type Tx } from '@hearth/persistence';
import { ensureProjectActive } from '../projects/project-guards';

/**
 * Who may do what on Project node graphs: every member reads (`project.read`), only the owner writes
 * (`project.config.write`, like setting overrides: a graph is Project configuration); a role without
 * the capability gets 403 `project_access_denied`, non-members 404 `project_not_found`. Every node
 * graph route of an archived Project answers 409 `project_archived`, reads included, like derived
 * outputs, the inbox and settings.
 */
@Injectable()
export class NodeGraphAccess {
  constructor(private readonly access: ProjectAccess) {}

  async forRead(actor: Actor, projectId: string, db?: Executor): Promise<ProjectGrant> {
    const grant = await this.access.require(actor, projectId, 'project.read', { db });
    ensureProjectActive(grant.project);
    return grant;
  }

  /** For a write inside `tx`: the Project row is share-locked, so a concurrent archive is ordered with it. */
  async forWrite(actor: Actor, projectId: string, tx: Tx): Promise<ProjectGrant> {
    const grant = await this.access.require(actor, projectId, 'project.config.write', { db: tx });
    const project = await projectsRepository.lockProject(tx, grant.project.id, 'share');
    if (!project) throw new DomainError('project_not_found', 404, 'Project not found');
    ensureProjectActive(project);
    return { project, role: grant.role };
  }
}

export const nodeGraphNotFound = () => new DomainError('node_graph_not_found', 404, 'Node graph not found');
