import { Inject, Injectable } from '@nestjs/common';
import {
  assertNodeGraphVersion,
  changedNodeGraphFields,
  checkNodeGraph,
  nodeGraphDescription,
  requireNodeGraphName,
  validationError,
  type CheckedNodeGraph,
} from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import { inTransaction, nodeGraphsRepository, type Db, type NodeGraphRow } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { NodeGraphAccess, nodeGraphNotFound } from './node-graph-access';
import { NodeGraphJournal } from './node-graph-journal';

export interface UpdateNodeGraphInput {
  /** The version the caller read: another one is 409 `node_graph_conflict`. */
  expected_version: number;
  name?: string;
  /** null clears it; absent leaves it. */
  description?: string | null;
  /** The whole new document (no partial graph patches). */
  graph?: unknown;
}

/**
 * `PATCH /projects/:id/node-graphs/:graph_id` (owner): name, description and/or the whole graph, at
 * the version the caller read. A change moves the graph to the next version and writes its log and
 * event in one transaction; a PATCH that changes nothing (equal values) writes nothing and answers the
 * graph as it is, version unchanged. The graph row is locked while it is compared and written, so of
 * two writers that read the same version one succeeds and the other gets 409.
 */
@Injectable()
export class UpdateNodeGraphUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: NodeGraphAccess,
    private readonly journal: NodeGraphJournal,
  ) {}

  async execute(
    actor: Actor,
    projectId: string,
    graphId: string,
    input: UpdateNodeGraphInput,
  ): Promise<NodeGraphRow> {
    if (input.name === undefined && input.description === undefined && input.graph === undefined) {
      throw validationError('Give at least one of name, description, graph', {
        fields: [{ field: 'name', problems: ['at least one of name, description, graph is required'] }],
      });
    }
    return inTransaction(this.db, async (uow) => {
      const { project } = await this.access.forWrite(actor, projectId, uow.tx);
      const name = input.name === undefined ? undefined : requireNodeGraphName(input.name);
      const description =
        input.description === undefined ? undefined : nodeGraphDescription(input.description);
      const checked: CheckedNodeGraph | undefined =
        input.graph === undefined ? undefined : checkNodeGraph(input.graph);
      const current = await nodeGraphsRepository.findInProjectForUpdate(uow.tx, project.id, graphId);
      if (!current) throw nodeGraphNotFound();
      assertNodeGraphVersion(current.version, input.expected_version);
      const changed = changedNodeGraphFields(current, { name, description, graph: checked?.graph });
      if (changed.length === 0) return current;
      const updated = await nodeGraphsRepository.update(uow.tx, current.id, current.version, {
        ...(changed.includes('name') ? { name } : {}),
        ...(changed.includes('description') ? { description } : {}),
        ...(changed.includes('graph') && checked
          ? {
              graph: checked.json,
              graph_byte_count: checked.byteCount,
              node_count: checked.nodeCount,
              edge_count: checked.edgeCount,
            }
          : {}),
        updated_by_account_id: actor.accountId,
        updated_by_client_id: actor.clientId,
        updated_at: Date.now(),
      });
      // The row is locked at this version, so the conditional update always applies.
      if (!updated) throw new Error(`node graph ${current.id} changed while locked`);
      await this.journal.record(uow, actor, project, 'update', current, updated, changed);
      return updated;
    });
  }
}
