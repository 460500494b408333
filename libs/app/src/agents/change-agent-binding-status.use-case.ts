import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import { agentsRepository, inTransaction, type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import { AgentProjectAccess, lockBindingWithType } from './agent-access';
import {
  agentBindingLog,
  agentBindingRef,
  bindingSettings,
  checkBindingCanBeEnabled,
} from './agent-binding-fields';
import type { AgentBindingWithType } from './get-agent-binding.use-case';

const ACTIONS = { enabled: 'agent_binding.enable', disabled: 'agent_binding.disable' } as const;

/**
 * `POST /projects/:id/agent-bindings/:binding_id/disable` and `/enable` (`project.agent.manage`).
 * Enable (from `disabled` or `error`) runs the create checks: 409 `agent_type_workspace_mismatch`
 * for a scope wider than the type's, 409 `agent_type_disabled`, 403 `agent_override_expands_*`;
 * it clears `status_reason`. Disable works from `enabled` and `error`. A binding already in the
 * target status is answered as it is, with nothing written.
 */
@Injectable()
export class ChangeAgentBindingStatusUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: AgentProjectAccess,
    private readonly logs: OperationLogWriter,
  ) {}

  async execute(
    actor: Actor,
    projectId: string,
    bindingId: string,
    target: 'enabled' | 'disabled',
  ): Promise<AgentBindingWithType> {
    return inTransaction(this.db, async ({ tx }) => {
      const { project } = await this.access.forWrite(actor, projectId, 'project.agent.manage', tx);
      const { binding, type } = await lockBindingWithType(tx, project.id, bindingId);
      if (binding.status === target) return { binding, type };
      if (target === 'enabled') checkBindingCanBeEnabled(type, bindingSettings(binding));
      const updated = await agentsRepository.updateBinding(tx, binding.id, {
        status: target,
        status_reason: null,
        updated_at: Date.now(),
      });
      await this.logs.write(
        tx,
        actor,
        agentBindingLog(ACTIONS[target], updated, {
          before_ref: { status: binding.status, status_reason: binding.status_reason },
          after_ref: agentBindingRef(updated),
        }),
      );
      return { binding: updated, type };
    });
  }
}
