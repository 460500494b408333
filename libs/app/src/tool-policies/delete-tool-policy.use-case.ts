import { Inject, Injectable } from '@nestjs/common';
import { DomainError } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import { inTransaction, toolPoliciesRepository, type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import { registryWorkspace, requireRegistryWriter } from '../settings/workspace-registry';
import { toolPolicyNotFound, toolPolicyRef } from './tool-policy-rules';

/**
 * `DELETE /tool-policies/:id`: a hard delete, refused with 409 `tool_policy_in_use` while an active
 * Project override references the policy. The policy row is locked first; an override PUT
 * share-locks it, so a delete and a new override are ordered.
 */
@Injectable()
export class DeleteToolPolicyUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly logs: OperationLogWriter,
  ) {}

  async execute(actor: Actor, id: string): Promise<{ id: string; deleted: true }> {
    requireRegistryWriter(actor, 'tool_policy');
    return inTransaction(this.db, async ({ tx }) => {
      const workspace = await registryWorkspace(tx, actor);
      const policy = await toolPoliciesRepository.lockInWorkspace(tx, workspace.id, id, 'update');
      if (!policy) throw toolPolicyNotFound();
      const overrides = await toolPoliciesRepository.countActiveOverrides(tx, id);
      if (overrides > 0) {
        throw new DomainError(
          'tool_policy_in_use',
          409,
          'An active Project override references this tool policy',
          {
            override_count: overrides,
          },
        );
      }
      await toolPoliciesRepository.delete(tx, id);
      await this.logs.write(tx, actor, {
        action: 'tool_policy.delete',
        workspace_id: workspace.id,
        target_type: 'tool_policy',
        target_id: id,
        before_ref: toolPolicyRef(policy),
      });
      return { id, deleted: true as const };
    });
  }
}
