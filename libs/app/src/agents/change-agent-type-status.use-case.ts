import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import { agentsRepository, inTransaction, type AgentTypeRow, type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import { agentTypeNotFound, requireAgentTypeWorkspace } from './agent-access';
import { agentTypeLog } from './agent-type-journal';
import { ensureAgentTypeNotInUse, lockAgentTypeForUpdate } from './agent-type-state';

const TRANSITIONS = {
  disabled: 'agent_type.disable',
  active: 'agent_type.enable',
} as const;

/**
 * `POST /workspaces/:id/agent-types/:agent_type_id/disable` and `/enable` (account actors). Disable
 * answers 409 `agent_type_in_use` while a binding of the type is `enabled` (the type row is locked
 * FOR UPDATE, so a concurrent binding create or enable is ordered with the check). A type already in
 * the target status is answered as it is, with nothing written.
 */
@Injectable()
export class ChangeAgentTypeStatusUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly logs: OperationLogWriter,
  ) {}

  async execute(
    actor: Actor,
    workspaceId: string,
    agentTypeId: string,
    target: 'active' | 'disabled',
  ): Promise<AgentTypeRow> {
    return inTransaction(this.db, async ({ tx }) => {
      const workspace = await requireAgentTypeWorkspace(tx, actor, workspaceId, agentTypeNotFound);
      const type = await lockAgentTypeForUpdate(tx, workspace.id, agentTypeId);
      if (type.status === target) return type;
      if (target === 'disabled') await ensureAgentTypeNotInUse(tx, type);
      const updated = await agentsRepository.updateType(tx, type.id, {
        status: target,
        updated_at: Date.now(),
      });
      await this.logs.write(
        tx,
        actor,
        agentTypeLog(TRANSITIONS[target], updated, {
          before_ref: { status: type.status },
          after_ref: { status: updated.status },
        }),
      );
      return updated;
    });
  }
}
