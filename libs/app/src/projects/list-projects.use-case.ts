import { Inject, Injectable } from '@nestjs/common';
import { cursorPage, decodeCursor, type CursorPage, type CursorScope } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import { projectsRepository, type Db, type ProjectRow, type ProjectWithRoleRow } from '@hearth/persistence';
import { DB } from '@hearth/platform';

export interface ListProjectsInput {
  role?: ProjectWithRoleRow['role'];
  status: ProjectRow['status'];
  limit: number;
  cursor?: string;
}

/**
 * `GET /projects`: the Projects the caller owns (as its account's default Client) or is an active
 * member of, newest first, with its role; keyset paging with an opaque cursor bound to the filters.
 */
@Injectable()
export class ListProjectsUseCase {
  constructor(@Inject(DB) private readonly db: Db) {}

  async execute(actor: Actor, input: ListProjectsInput): Promise<CursorPage<ProjectWithRoleRow>> {
    const scope: CursorScope = { list: 'projects', params: { role: input.role, status: input.status } };
    const beforeId =
      input.cursor === undefined ? undefined : String(decodeCursor(input.cursor, scope, ['string'])[0]);
    const rows = await projectsRepository.listReadableProjects(this.db, {
      subject: actor,
      status: input.status,
      role: input.role,
      beforeId,
      limit: input.limit + 1,
    });
    return cursorPage(rows, input.limit, scope, (row) => [row.id]);
  }
}
