import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import { nodeGraphsRepository, type Db, type NodeGraphRow } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { NodeGraphAccess, nodeGraphNotFound } from './node-graph-access';

/** `GET /projects/:id/node-graphs/:graph_id` (every member): the graph with its document. */
@Injectable()
export class GetNodeGraphUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: NodeGraphAccess,
  ) {}

  async execute(actor: Actor, projectId: string, graphId: string): Promise<NodeGraphRow> {
    const { project } = await this.access.forRead(actor, projectId);
    const graph = await nodeGraphsRepository.findInProject(this.db, project.id, graphId);
    if (!graph) throw nodeGraphNotFound();
    return graph;
  }
}
