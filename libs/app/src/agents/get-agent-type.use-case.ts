import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import type { AgentTypeRow, Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { agentTypeNotFound, requireAgentType, requireAgentTypeWorkspace } from './agent-access';

/** `GET /workspaces/:id/agent-types/:agent_type_id` (account actors); 404 `agent_type_not_found`. */
@Injectable()
export class GetAgentTypeUseCase {
  constructor(@Inject(DB) private readonly db: Db) {}

  async execute(actor: Actor, workspaceId: string, agentTypeId: string): Promise<AgentTypeRow> {
    const workspace = await requireAgentTypeWorkspace(this.db, actor, workspaceId, agentTypeNotFound);
    return requireAgentType(this.db, workspace.id, agentTypeId);
  }
}
