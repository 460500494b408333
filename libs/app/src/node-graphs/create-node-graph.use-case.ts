import { Inject, Injectable } from '@nestjs/common';
import { checkNodeGraph, ID_PREFIX, newId, nodeGraphDescription, requireNodeGraphName } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import { inTransaction, nodeGraphsRepository, type Db, type NodeGraphRow } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { NodeGraphAccess } from './node-graph-access';
import { NodeGraphJournal } from './node-graph-journal';

export interface CreateNodeGraphInput {
  name: string;
  /** Absent or null: none. */
  description?: string | null;
  /** `{nodes, edges}`, checked by the node graph rules. */
  graph: unknown;
}

/**
 * `POST /projects/:id/node-graphs` (owner): a graph at version 1, its operation log and its Project
 * event in one transaction; the event wake-up is published after commit.
 */
@Injectable()
export class CreateNodeGraphUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: NodeGraphAccess,
    private readonly journal: NodeGraphJournal,
  ) {}

  async execute(actor: Actor, projectId: string, input: CreateNodeGraphInput): Promise<NodeGraphRow> {
    return inTransaction(this.db, async (uow) => {
      const { project } = await this.access.forWrite(actor, projectId, uow.tx);
      const name = requireNodeGraphName(input.name);
      const description = nodeGraphDescription(input.description);
      const checked = checkNodeGraph(input.graph);
      const now = Date.now();
      const created = await nodeGraphsRepository.insert(uow.tx, {
        id: newId(ID_PREFIX.nodeGraph),
        workspace_id: project.workspace_id,
        project_id: project.id,
        account_id: project.account_id,
        name,
        description,
        graph: checked.json,
        graph_byte_count: checked.byteCount,
        node_count: checked.nodeCount,
        edge_count: checked.edgeCount,
        version: 1,
        created_by_account_id: actor.accountId,
        created_by_client_id: actor.clientId,
        updated_by_account_id: actor.accountId,
        updated_by_client_id: actor.clientId,
        created_at: now,
        updated_at: now,
      });
      await this.journal.record(uow, actor, project, 'create', null, created, [
        'name',
        'description',
        'graph',
      ]);
      return created;
    });
  }
}
