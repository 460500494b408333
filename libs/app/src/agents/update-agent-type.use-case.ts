import { Inject, Injectable } from '@nestjs/common';
import { jsonEqual, normaliseAgentDefaults, storedAgentDefaults } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import {
  agentsRepository,
  inTransaction,
  type AgentTypeRow,
  type AgentTypesTable,
  type Db,
} from '@hearth/persistence';
import { DB } from '@hearth/platform';
import type { Updateable } from 'kysely';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import { agentTypeNotFound, requireAgentTypeWorkspace } from './agent-access';
import { checkAgentReferences } from './agent-binding-fields';
import { agentTypeLog, agentTypeRef } from './agent-type-journal';
import {
  ensureAgentTypeNotInUse,
  lockAgentTypeForUpdate,
  setWideningBindingsToError,
} from './agent-type-state';

export interface UpdateAgentTypeInput {
  name?: string;
  status?: 'active' | 'disabled';
  /** Replaces the whole defaults object (no field merge); omitted fields take empty defaults. */
  defaults?: unknown;
}

/**
 * `PATCH /workspaces/:id/agent-types/:agent_type_id` (account actors): name, status, defaults.
 * `status: disabled` obeys the disable rule (409 `agent_type_in_use`); a default `llm_profile_id` /
 * `tool_policy_id` it changes, or an `mcp_bindings[].mcp_server_id` it adds, must exist in the
 * Workspace (404 as on create). New defaults move every binding whose set overrides now widen them
 * to `error` (setWideningBindingsToError), in the same transaction as the change and its
 * `agent_type.update` log. A PATCH that changes nothing writes nothing.
 */
@Injectable()
export class UpdateAgentTypeUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly logs: OperationLogWriter,
  ) {}

  async execute(
    actor: Actor,
    workspaceId: string,
    agentTypeId: string,
    input: UpdateAgentTypeInput,
  ): Promise<AgentTypeRow> {
    return inTransaction(this.db, async ({ tx }) => {
      const workspace = await requireAgentTypeWorkspace(tx, actor, workspaceId, agentTypeNotFound);
      const defaults = input.defaults === undefined ? undefined : normaliseAgentDefaults(input.defaults);
      const type = await lockAgentTypeForUpdate(tx, workspace.id, agentTypeId);
      const changes: Updateable<AgentTypesTable> = {};
      const changed: string[] = [];
      if (input.name !== undefined && input.name !== type.name) {
        changes.name = input.name;
        changed.push('name');
      }
      if (input.status !== undefined && input.status !== type.status) {
        if (input.status === 'disabled') await ensureAgentTypeNotInUse(tx, type);
        changes.status = input.status;
        changed.push('status');
      }
      const stored = storedAgentDefaults(type.defaults);
      if (defaults && !jsonEqual(defaults, stored)) {
        // Only ids the PATCH changes: a profile, policy or MCP server deleted since does not block
        // other changes.
        await checkAgentReferences(
          tx,
          { account_id: workspace.account_id, workspace_id: workspace.id },
          {
            llm_profile_id:
              defaults.llm_profile_id !== stored.llm_profile_id ? defaults.llm_profile_id : null,
            tool_policy_id:
              defaults.tool_policy_id !== stored.tool_policy_id ? defaults.tool_policy_id : null,
            mcp_bindings: defaults.mcp_bindings,
          },
          stored.mcp_bindings.map((m) => m.mcp_server_id),
        );
        changes.defaults = JSON.stringify(defaults);
        changed.push('defaults');
      }
      if (changed.length === 0) return type;
      const now = Date.now();
      const updated = await agentsRepository.updateType(tx, type.id, { ...changes, updated_at: now });
      const errored =
        defaults && changed.includes('defaults')
          ? await setWideningBindingsToError(tx, updated, defaults, now)
          : [];
      await this.logs.write(
        tx,
        actor,
        agentTypeLog('agent_type.update', updated, {
          before_ref: agentTypeRef(type),
          after_ref: agentTypeRef(updated),
          diff: { changed_fields: changed },
          metadata: { bindings_set_to_error: errored },
        }),
      );
      return updated;
    });
  }
}
