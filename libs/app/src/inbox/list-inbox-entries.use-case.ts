import { Inject, Injectable } from '@nestjs/common';
import {
  cursorPage,
  decodeCursor,
  INBOX_LIST_DEFAULT_LIMIT,
  type CursorPage,
  type CursorScope,
  type InboxEntryStatus,
} from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import { inboxRepository, type Db, type InboxEntryRow } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { InboxAccess } from './inbox-access';

export interface ListInboxEntriesQuery {
  status?: InboxEntryStatus;
  kind?: string;
  source_session_id?: string;
  created_by_account_id?: string;
  /** 1-200, default 50. */
  limit?: number;
  cursor?: string;
}

/**
 * `GET /projects/:id/inbox` (every member): newest first, keyset paging on the id. A cursor is bound
 * to its Project and filters (400 `invalid_cursor` otherwise). Every status unless `status` is given.
 */
@Injectable()
export class ListInboxEntriesUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: InboxAccess,
  ) {}

  async execute(
    actor: Actor,
    projectId: string,
    query: ListInboxEntriesQuery,
  ): Promise<CursorPage<InboxEntryRow>> {
    const { project } = await this.access.forRead(actor, projectId);
    const limit = query.limit ?? INBOX_LIST_DEFAULT_LIMIT;
    const scope: CursorScope = {
      list: 'inbox',
      params: {
        project_id: project.id,
        status: query.status,
        kind: query.kind,
        source_session_id: query.source_session_id,
        created_by_account_id: query.created_by_account_id,
      },
    };
    const beforeId =
      query.cursor === undefined ? undefined : String(decodeCursor(query.cursor, scope, ['string'])[0]);
    const rows = await inboxRepository.list(this.db, {
      projectId: project.id,
      status: query.status,
      kind: query.kind,
      sourceSessionId: query.source_session_id,
      createdByAccountId: query.created_by_account_id,
      beforeId,
      limit: limit + 1,
    });
    return cursorPage(rows, limit, scope, (row) => [row.id]);
  }
}
