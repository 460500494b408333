import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import { agentsRepository, type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { AgentProjectAccess } from './agent-access';
import type { AgentBindingWithType } from './get-agent-binding.use-case';

/** `GET /projects/:id/agent-bindings` (`project.agent.read`): the Project's bindings in creation order. */
@Injectable()
export class ListAgentBindingsUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: AgentProjectAccess,
  ) {}

  async execute(actor: Actor, projectId: string): Promise<AgentBindingWithType[]> {
    const { project } = await this.access.forRead(actor, projectId);
    const bindings = await agentsRepository.listBindings(this.db, project.id);
    const types = await agentsRepository.findTypesByIds(this.db, [
      ...new Set(bindings.map((b) => b.agent_type_id)),
    ]);
    const byId = new Map(types.map((t) => [t.id, t]));
    return bindings.map((binding) => {
      const type = byId.get(binding.agent_type_id);
      if (!type) throw new Error(`Agent Binding ${binding.id} has no type`);
      return { binding, type };
    });
  }
}
