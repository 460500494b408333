import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import { mcpServersRepository, type Db, type McpServerRow } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { registryWorkspace } from '../settings/workspace-registry';

/** `GET /mcp-servers`: the servers of the caller's default Workspace, oldest first. */
@Injectable()
export class ListMcpServersUseCase {
  constructor(@Inject(DB) private readonly db: Db) {}

  async execute(actor: Actor): Promise<McpServerRow[]> {
    const workspace = await registryWorkspace(this.db, actor);
    return mcpServersRepository.listOfWorkspace(this.db, workspace.id);
  }
}
