import { Inject, Injectable } from '@nestjs/common';
import { ProjectAccess, type Actor, type ProjectGrant } from '@hearth/permissions';
import { type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { ensureProjectActive } from './project-guards';

/** `GET /projects/:id`: `project.read`; an archived Project answers 409 `project_archived`. */
@Injectable()
export class GetProjectUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: ProjectAccess,
  ) {}

  async execute(actor: Actor, projectId: string): Promise<ProjectGrant> {
    const grant = await this.access.require(actor, projectId, 'project.read', { db: this.db });
    ensureProjectActive(grant.project);
    return grant;
  }
}
