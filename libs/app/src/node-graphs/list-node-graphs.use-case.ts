import { Inject, Injectable } from '@nestjs/common';
import {
  cursorPage,
  decodeCursor,
  NODE_GRAPH_LIST_DEFAULT_LIMIT,
  type CursorPage,
  type CursorScope,
} from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import { nodeGraphsRepository, type Db, type NodeGraphSummaryRow } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { NodeGraphAccess } from './node-graph-access';

export interface ListNodeGraphsQuery {
  /** 1-200, default 50. */
  limit?: number;
  cursor?: string;
}

/**
 * `GET /projects/:id/node-graphs` (every member): summaries without the documents, newest first,
 * keyset paging on the id like derived outputs. A cursor is bound to its Project (400
 * `invalid_cursor` otherwise).
 */
@Injectable()
export class ListNodeGraphsUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: NodeGraphAccess,
  ) {}

  async execute(
    actor: Actor,
    projectId: string,
    query: ListNodeGraphsQuery,
  ): Promise<CursorPage<NodeGraphSummaryRow>> {
    const { project } = await this.access.forRead(actor, projectId);
    const limit = query.limit ?? NODE_GRAPH_LIST_DEFAULT_LIMIT;
    const scope: CursorScope = { list: 'node_graphs', params: { project_id: project.id } };
    const beforeId =
      query.cursor === undefined ? undefined : String(decodeCursor(query.cursor, scope, ['string'])[0]);
    const rows = await nodeGraphsRepository.list(this.db, {
      projectId: project.id,
      beforeId,
      limit: limit + 1,
    });
    return cursorPage(rows, limit, scope, (row) => [row.id]);
  }
}
