import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import { agentsRepository, type AgentTypeRow, type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { requireAgentTypeWorkspace } from './agent-access';

/** `GET /workspaces/:id/agent-types` (account actors): the Workspace's types in creation order. */
@Injectable()
export class ListAgentTypesUseCase {
  constructor(@Inject(DB) private readonly db: Db) {}

  async execute(actor: Actor, workspaceId: string): Promise<AgentTypeRow[]> {
    const workspace = await requireAgentTypeWorkspace(this.db, actor, workspaceId);
    return agentsRepository.listTypes(this.db, workspace.id);
  }
}
