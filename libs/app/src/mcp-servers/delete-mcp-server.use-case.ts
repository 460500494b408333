import { Inject, Injectable } from '@nestjs/common';
import { DomainError } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import { inTransaction, mcpServersRepository, type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import { registryWorkspace, requireRegistryWriter } from '../settings/workspace-registry';
import { mcpServerNotFound, mcpServerRef } from './mcp-server-rules';

/**
 * `DELETE /mcp-servers/:id`: a hard delete, refused with 409 `mcp_server_in_use` while an enabled
 * Project binding references the server. The server row is locked first; a binding PUT share-locks
 * it, so a delete and a new binding are ordered.
 */
@Injectable()
export class DeleteMcpServerUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly logs: OperationLogWriter,
  ) {}

  async execute(actor: Actor, id: string): Promise<{ id: string; deleted: true }> {
    requireRegistryWriter(actor, 'mcp_server');
    return inTransaction(this.db, async ({ tx }) => {
      const workspace = await registryWorkspace(tx, actor);
      const server = await mcpServersRepository.lockInWorkspace(tx, workspace.id, id, 'update');
      if (!server) throw mcpServerNotFound();
      const bindings = await mcpServersRepository.countEnabledBindings(tx, id);
      if (bindings > 0) {
        throw new DomainError(
          'mcp_server_in_use',
          409,
          'An enabled Project binding references this MCP server',
          {
            binding_count: bindings,
          },
        );
      }
      await mcpServersRepository.delete(tx, id);
      await this.logs.write(tx, actor, {
        action: 'mcp_server.delete',
        workspace_id: workspace.id,
        target_type: 'mcp_server',
        target_id: id,
        before_ref: mcpServerRef(server),
      });
      return { id, deleted: true as const };
    });
  }
}
