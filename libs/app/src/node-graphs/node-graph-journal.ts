import { Injectable } from '@nestjs/common';
import { NODE_GRAPH_WRITE_NAMES, type NodeGraphWriteAction } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import type { NodeGraphRow, ProjectRow, UnitOfWork } from '@hearth/persistence';
import { ProjectEventWriter } from '../events/project-event-writer';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';

type JournalGraph = Pick<NodeGraphRow, 'id' | 'version' | 'node_count' | 'edge_count' | 'graph_byte_count'>;

/**
 * The record of one node graph write, in the write's transaction: the operation log
 * (`node_graph.create|update|delete`, refs `{version}`, metadata the graph's counts and size) and the
 * Project event (`node_graph.created|updated|deleted`, visibility `project`, payload
 * `{node_graph_id, version, changed_fields}`). Neither holds the name, the description or the graph.
 * The event's wake-up is published after commit by the event writer.
 */
@Injectable()
export class NodeGraphJournal {
  constructor(
    private readonly logs: OperationLogWriter,
    private readonly events: ProjectEventWriter,
  ) {}

  /**
   * `before`: the graph as it was (null on create); `after`: as it is now (for a delete, the deleted
   * graph: the payload's version is the one deleted).
   */
  async record(
    uow: UnitOfWork,
    actor: Actor,
    project: ProjectRow,
    action: NodeGraphWriteAction,
    before: JournalGraph | null,
    after: JournalGraph,
    changedFields: string[],
  ): Promise<void> {
    const names = NODE_GRAPH_WRITE_NAMES[action];
    const log = await this.logs.write(uow.tx, actor, {
      action: names.log,
      account_id: project.account_id,
      workspace_id: project.workspace_id,
      project_id: project.id,
      target_type: 'node_graph',
      target_id: after.id,
      before_ref: before === null ? null : { version: before.version },
      after_ref: action === 'delete' ? null : { version: after.version },
      diff: { changed_fields: changedFields },
      metadata: {
        node_count: after.node_count,
        edge_count: after.edge_count,
        graph_byte_count: after.graph_byte_count,
      },
    });
    await this.events.record(uow, {
      project,
      type: names.event,
      visibility: 'project',
      actor,
      operation_log_id: log.id,
      payload: { node_graph_id: after.id, version: after.version, changed_fields: changedFields },
    });
  }
}
