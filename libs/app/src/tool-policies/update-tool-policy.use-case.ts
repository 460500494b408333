import { Inject, Injectable } from '@nestjs/common';
import { canonicalJson, requireToolPolicyJson } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import {
  inTransaction,
  isUniqueViolation,
  toolPoliciesRepository,
  type Db,
  type ToolPolicyRow,
} from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { requireSomeField } from '../accounts/account-rules';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import {
  registryNameConflict,
  registryWorkspace,
  requireRegistryWriter,
} from '../settings/workspace-registry';
import { toolPolicyNotFound, toolPolicyRef } from './tool-policy-rules';

export interface UpdateToolPolicyInput {
  name?: string;
  policy_json?: unknown;
  status?: 'active' | 'archived';
}

/** `PATCH /tool-policies/:id`: at least one field; `policy_json` is replaced whole. A no-op writes nothing. */
@Injectable()
export class UpdateToolPolicyUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly logs: OperationLogWriter,
  ) {}

  async execute(actor: Actor, id: string, input: UpdateToolPolicyInput): Promise<ToolPolicyRow> {
    requireRegistryWriter(actor, 'tool_policy');
    requireSomeField(input, ['name', 'policy_json', 'status']);
    const policy = input.policy_json === undefined ? undefined : requireToolPolicyJson(input.policy_json);
    try {
      return await inTransaction(this.db, async ({ tx }) => {
        const workspace = await registryWorkspace(tx, actor);
        const before = await toolPoliciesRepository.lockInWorkspace(tx, workspace.id, id, 'update');
        if (!before) throw toolPolicyNotFound();
        const next = {
          name: input.name ?? before.name,
          policy_json: policy ?? before.policy_json,
          status: input.status ?? before.status,
        };
        const beforeRef = { name: before.name, policy_json: before.policy_json, status: before.status };
        if (canonicalJson(next) === canonicalJson(beforeRef)) return before;
        if (
          next.name !== before.name &&
          (await toolPoliciesRepository.findByName(tx, workspace.id, next.name))
        )
          throw registryNameConflict('tool_policy', next.name);
        const after = await toolPoliciesRepository.update(tx, id, {
          ...next,
          policy_json: JSON.stringify(next.policy_json),
          updated_at: Date.now(),
        });
        await this.logs.write(tx, actor, {
          action: 'tool_policy.update',
          workspace_id: workspace.id,
          target_type: 'tool_policy',
          target_id: id,
          before_ref: toolPolicyRef(before),
          after_ref: toolPolicyRef(after),
        });
        return after;
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw registryNameConflict('tool_policy', input.name ?? '');
      throw error;
    }
  }
}
