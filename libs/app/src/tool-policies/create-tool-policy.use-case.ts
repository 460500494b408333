import { Inject, Injectable } from '@nestjs/common';
import { ID_PREFIX, newId, requireToolPolicyJson } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import {
  inTransaction,
  isUniqueViolation,
  toolPoliciesRepository,
  type Db,
  type ToolPolicyRow,
} from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import {
  registryNameConflict,
  registryWorkspace,
  requireRegistryWriter,
} from '../settings/workspace-registry';
import { toolPolicyRef } from './tool-policy-rules';

export interface CreateToolPolicyInput {
  name: string;
  /** `{mode: "allow" | "deny", tools: string[]}`. */
  policy_json: unknown;
  status?: 'active' | 'archived';
}

/** `POST /tool-policies`: a policy in the caller's default Workspace, with its `tool_policy.create` log. */
@Injectable()
export class CreateToolPolicyUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly logs: OperationLogWriter,
  ) {}

  async execute(actor: Actor, input: CreateToolPolicyInput): Promise<ToolPolicyRow> {
    requireRegistryWriter(actor, 'tool_policy');
    const policy = requireToolPolicyJson(input.policy_json);
    try {
      return await inTransaction(this.db, async ({ tx }) => {
        const workspace = await registryWorkspace(tx, actor);
        if (await toolPoliciesRepository.findByName(tx, workspace.id, input.name))
          throw registryNameConflict('tool_policy', input.name);
        const now = Date.now();
        const row = await toolPoliciesRepository.insert(tx, {
          id: newId(ID_PREFIX.toolPolicy),
          account_id: actor.accountId,
          workspace_id: workspace.id,
          name: input.name,
          policy_json: JSON.stringify(policy),
          status: input.status ?? 'active',
          created_at: now,
          updated_at: now,
        });
        await this.logs.write(tx, actor, {
          action: 'tool_policy.create',
          workspace_id: workspace.id,
          target_type: 'tool_policy',
          target_id: row.id,
          after_ref: toolPolicyRef(row),
        });
        return row;
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw registryNameConflict('tool_policy', input.name);
      throw error;
    }
  }
}
