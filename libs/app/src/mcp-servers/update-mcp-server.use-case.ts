import { Inject, Injectable } from '@nestjs/common';
import { canonicalJson, requireMcpUrl, requireToolList } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import {
  inTransaction,
  isUniqueViolation,
  mcpServersRepository,
  type Db,
  type McpServerRow,
} from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { requireSomeField } from '../accounts/account-rules';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import {
  registryNameConflict,
  registryWorkspace,
  requireRegistryWriter,
} from '../settings/workspace-registry';
import { mcpServerNotFound, mcpServerRef } from './mcp-server-rules';

export interface UpdateMcpServerInput {
  name?: string;
  url?: string;
  status?: 'enabled' | 'disabled';
  tools?: string[];
}

/**
 * `PATCH /mcp-servers/:id`: at least one field. A PATCH that changes nothing writes nothing. Tools
 * dropped from the catalog stop being offered through bindings that allowed them (effective config).
 */
@Injectable()
export class UpdateMcpServerUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly logs: OperationLogWriter,
  ) {}

  async execute(actor: Actor, id: string, input: UpdateMcpServerInput): Promise<McpServerRow> {
    requireRegistryWriter(actor, 'mcp_server');
    requireSomeField(input, ['name', 'url', 'status', 'tools']);
    if (input.url !== undefined) requireMcpUrl(input.url);
    if (input.tools !== undefined) requireToolList('tools', input.tools);
    try {
      return await inTransaction(this.db, async ({ tx }) => {
        const workspace = await registryWorkspace(tx, actor);
        const before = await mcpServersRepository.lockInWorkspace(tx, workspace.id, id, 'update');
        if (!before) throw mcpServerNotFound();
        const next = {
          name: input.name ?? before.name,
          url: input.url ?? before.url,
          status: input.status ?? before.status,
          tools: input.tools ?? before.tools,
        };
        const beforeRef = { name: before.name, url: before.url, status: before.status, tools: before.tools };
        if (canonicalJson(next) === canonicalJson(beforeRef)) return before;
        if (next.name !== before.name && (await mcpServersRepository.findByName(tx, workspace.id, next.name)))
          throw registryNameConflict('mcp_server', next.name);
        const after = await mcpServersRepository.update(tx, id, {
          ...next,
          tools: JSON.stringify(next.tools),
          updated_at: Date.now(),
        });
        await this.logs.write(tx, actor, {
          action: 'mcp_server.update',
          workspace_id: workspace.id,
          target_type: 'mcp_server',
          target_id: id,
          before_ref: mcpServerRef(before),
          after_ref: mcpServerRef(after),
        });
        return after;
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw registryNameConflict('mcp_server', input.name ?? '');
      throw error;
    }
  }
}
