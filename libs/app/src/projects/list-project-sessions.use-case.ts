import { Inject, Injectable } from '@nestjs/common';
import { cursorPage, decodeCursor, type CursorPage, type CursorScope } from '@hearth/domain';
import { ProjectAccess, type Actor } from '@hearth/permissions';
import { sessionsRepository, type Db, type SessionRow, type SessionStatus } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { ensureProjectActive } from './project-guards';

export interface ListProjectSessionsInput {
  status?: SessionStatus;
  limit: number;
  cursor?: string;
}

/**
 * `GET /projects/:id/sessions`: any member (`project.read`), newest first, keyset paging. An
 * archived Project answers 409 `project_archived` like its detail read.
 */
@Injectable()
export class ListProjectSessionsUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: ProjectAccess,
  ) {}

  async execute(
    actor: Actor,
    projectId: string,
    input: ListProjectSessionsInput,
  ): Promise<CursorPage<SessionRow>> {
    const { project } = await this.access.require(actor, projectId, 'project.read', { db: this.db });
    ensureProjectActive(project);
    const scope: CursorScope = {
      list: 'project_sessions',
      params: { project_id: project.id, status: input.status },
    };
    const beforeId =
      input.cursor === undefined ? undefined : String(decodeCursor(input.cursor, scope, ['string'])[0]);
    const rows = await sessionsRepository.listProjectSessions(this.db, {
      projectId: project.id,
      status: input.status,
      beforeId,
      limit: input.limit + 1,
    });
    return cursorPage(rows, input.limit, scope, (row) => [row.id]);
  }
}
