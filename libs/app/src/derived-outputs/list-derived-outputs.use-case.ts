import { Inject, Injectable } from '@nestjs/common';
import {
  cursorPage,
  type CursorPage,
  type CursorScope,
  decodeCursor,
  DERIVED_OUTPUT_LIST_DEFAULT_LIMIT,
  type DerivedOutputStatus,
} from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import { derivedOutputsRepository, type Db, type DerivedOutputRow } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { DerivedOutputAccess } from './derived-output-access';

export interface ListDerivedOutputsQuery {
  domain?: string;
  status?: DerivedOutputStatus;
  source_session_id?: string;
  owner_account_id?: string;
  /** 1-200, default 50. */
  limit?: number;
  cursor?: string;
}

/**
 * `GET /projects/:id/derived-outputs` (every member): newest first, keyset paging on the id. A cursor
 * is bound to its Project and filters (400 `invalid_cursor` otherwise). Every status is listed unless
 * `status` is given.
 */
@Injectable()
export class ListDerivedOutputsUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: DerivedOutputAccess,
  ) {}

  async execute(
    actor: Actor,
    projectId: string,
    query: ListDerivedOutputsQuery,
  ): Promise<CursorPage<DerivedOutputRow>> {
    const { project } = await this.access.forRead(actor, projectId);
    const limit = query.limit ?? DERIVED_OUTPUT_LIST_DEFAULT_LIMIT;
    const scope: CursorScope = {
      list: 'derived_outputs',
      params: {
        project_id: project.id,
        domain: query.domain,
        status: query.status,
        source_session_id: query.source_session_id,
        owner_account_id: query.owner_account_id,
      },
    };
    const beforeId =
      query.cursor === undefined ? undefined : String(decodeCursor(query.cursor, scope, ['string'])[0]);
    const rows = await derivedOutputsRepository.list(this.db, {
      projectId: project.id,
      domain: query.domain,
      status: query.status,
      sourceSessionId: query.source_session_id,
      ownerAccountId: query.owner_account_id,
      beforeId,
      limit: limit + 1,
    });
    return cursorPage(rows, limit, scope, (row) => [row.id]);
  }
}
