import { Inject, Injectable } from '@nestjs/common';
import { assertNodeGraphVersion } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import { inTransaction, nodeGraphsRepository, type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { NodeGraphAccess, nodeGraphNotFound } from './node-graph-access';
import { NodeGraphJournal } from './node-graph-journal';

export interface DeleteNodeGraphInput {
  /** When given, the graph is deleted only at this version (409 `node_graph_conflict` otherwise). */
  expected_version?: number;
}

/**
 * `DELETE /projects/:id/node-graphs/:graph_id` (owner): deletes the row (graphs are not archived);
 * the operation log and the Project event, written in the same transaction, keep its id, last version
 * and counts. A graph already deleted is 404 `node_graph_not_found`.
 */
@Injectable()
export class DeleteNodeGraphUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: NodeGraphAccess,
    private readonly journal: NodeGraphJournal,
  ) {}

  async execute(
    actor: Actor,
    projectId: string,
    graphId: string,
    input: DeleteNodeGraphInput,
  ): Promise<void> {
    await inTransaction(this.db, async (uow) => {
      const { project } = await this.access.forWrite(actor, projectId, uow.tx);
      const current = await nodeGraphsRepository.findInProjectForUpdate(uow.tx, project.id, graphId);
      if (!current) throw nodeGraphNotFound();
      assertNodeGraphVersion(current.version, input.expected_version);
      // The row is locked at this version, so the conditional delete always applies.
      if (!(await nodeGraphsRepository.delete(uow.tx, current.id, current.version)))
        throw new Error(`node graph ${current.id} changed while locked`);
      await this.journal.record(uow, actor, project, 'delete', current, current, []);
    });
  }
}
