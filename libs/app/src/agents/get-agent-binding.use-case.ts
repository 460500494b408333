import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import { agentsRepository, type AgentBindingRow, type AgentTypeRow, type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { AgentProjectAccess, requireBinding } from './agent-access';

/** A binding and its type (the view shows the type's defaults where the binding inherits). */
export interface AgentBindingWithType {
  binding: AgentBindingRow;
  type: AgentTypeRow;
}

/** `GET /projects/:id/agent-bindings/:binding_id` (`project.agent.read`); 404 `binding_not_found`. */
@Injectable()
export class GetAgentBindingUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: AgentProjectAccess,
  ) {}

  async execute(actor: Actor, projectId: string, bindingId: string): Promise<AgentBindingWithType> {
    const { project } = await this.access.forRead(actor, projectId);
    const binding = await requireBinding(this.db, project.id, bindingId);
    const [type] = await agentsRepository.findTypesByIds(this.db, [binding.agent_type_id]);
    if (!type) throw new Error(`Agent Binding ${binding.id} has no type`);
    return { binding, type };
  }
}
