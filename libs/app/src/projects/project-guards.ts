import { DomainError } from '@hearth/domain';
import { projectsRepository, type ProjectRow, type Tx } from '@hearth/persistence';

/**
 * An archived Project is frozen: its detail reads and every write into it answer 409
 * `project_archived` (spec 1 "Errors"). Call it after the access check, so non-members still get 404.
 */
export function ensureProjectActive(project: Pick<ProjectRow, 'id' | 'status'>): void {
  if (project.status === 'archived') {
    throw new DomainError('project_archived', 409, `Project ${project.id} is archived`);
  }
}

/**
 * For a write into a Project inside `tx`, after the access check: the Project row share-locked until
 * the transaction ends and still active (409 `project_archived`). A concurrent archive is then ordered
 * with the write: it waits for the write, or the write waits for it and sees `archived`.
 */
export async function lockActiveProject(tx: Tx, projectId: string): Promise<ProjectRow> {
  const project = await projectsRepository.lockProject(tx, projectId, 'share');
  if (!project) throw new DomainError('project_not_found', 404, 'Project not found');
  ensureProjectActive(project);
  return project;
}
