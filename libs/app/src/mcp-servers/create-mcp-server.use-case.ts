import { Inject, Injectable } from '@nestjs/common';
import { ID_PREFIX, newId, requireMcpUrl, requireToolList } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import {
  inTransaction,
  isUniqueViolation,
  mcpServersRepository,
  type Db,
  type McpServerRow,
} from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import {
  registryNameConflict,
  registryWorkspace,
  requireRegistryWriter,
} from '../settings/workspace-registry';
import { mcpServerRef } from './mcp-server-rules';

export interface CreateMcpServerInput {
  name: string;
  url: string;
  status?: 'enabled' | 'disabled';
  /** The server's tool catalog; default `[]`. */
  tools?: string[];
}

/** `POST /mcp-servers`: a server in the caller's default Workspace, with its `mcp_server.create` log. */
@Injectable()
export class CreateMcpServerUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly logs: OperationLogWriter,
  ) {}

  async execute(actor: Actor, input: CreateMcpServerInput): Promise<McpServerRow> {
    requireRegistryWriter(actor, 'mcp_server');
    const url = requireMcpUrl(input.url);
    const tools = requireToolList('tools', input.tools ?? []);
    try {
      return await inTransaction(this.db, async ({ tx }) => {
        const workspace = await registryWorkspace(tx, actor);
        if (await mcpServersRepository.findByName(tx, workspace.id, input.name))
          throw registryNameConflict('mcp_server', input.name);
        const now = Date.now();
        const server = await mcpServersRepository.insert(tx, {
          id: newId(ID_PREFIX.mcpServer),
          account_id: actor.accountId,
          workspace_id: workspace.id,
          name: input.name,
          url,
          status: input.status ?? 'enabled',
          tools: JSON.stringify(tools),
          created_at: now,
          updated_at: now,
        });
        await this.logs.write(tx, actor, {
          action: 'mcp_server.create',
          workspace_id: workspace.id,
          target_type: 'mcp_server',
          target_id: server.id,
          after_ref: mcpServerRef(server),
        });
        return server;
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw registryNameConflict('mcp_server', input.name);
      throw error;
    }
  }
}
