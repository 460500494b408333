import { DomainError } from '@hearth/domain';
import type { ProjectRow } from '@hearth/persistence';

/**
 * An archived Project is frozen: its detail reads and every write into it answer 409
 * `project_archived` (spec 1 "Errors"). Call it after the access check, so non-members still get 404.
 */
export function ensureProjectActive(project: Pick<ProjectRow, 'id' | 'status'>): void {
  if (project.status === 'archived') {
    throw new DomainError('project_archived', 409, `Project ${project.id} is archived`);
  }
}
