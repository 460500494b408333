import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import { mcpServersRepository, type Db, type McpServerRow } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { registryWorkspace } from '../settings/workspace-registry';
import { mcpServerNotFound } from './mcp-server-rules';

/** `GET /mcp-servers/:id`: a server of the caller's default Workspace, else 404 `not_found`. */
@Injectable()
export class GetMcpServerUseCase {
  constructor(@Inject(DB) private readonly db: Db) {}

  async execute(actor: Actor, id: string): Promise<McpServerRow> {
    const workspace = await registryWorkspace(this.db, actor);
    const server = await mcpServersRepository.findInWorkspace(this.db, workspace.id, id);
    if (!server) throw mcpServerNotFound();
    return server;
  }
}
