import { Inject, Injectable } from '@nestjs/common';
import { DomainError, ID_PREFIX, newId, normaliseAgentDefaults, type AgentScopeKind } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import { agentsRepository, inTransaction, type AgentTypeRow, type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import { requireAgentTypeWorkspace } from './agent-access';
import { checkAgentReferences } from './agent-binding-fields';
import { agentTypeLog, agentTypeRef } from './agent-type-journal';

export interface CreateAgentTypeInput {
  key: string;
  name: string;
  scope_kind: AgentScopeKind;
  /** Omitted fields take empty defaults (normaliseAgentDefaults). */
  defaults?: unknown;
}

/**
 * `POST /workspaces/:id/agent-types` (account actors): a type starts `active`; its key is unique in
 * the Workspace (409 `agent_type_key_conflict`); a default `llm_profile_id` / `tool_policy_id` and
 * every `mcp_bindings[].mcp_server_id` must exist in the Workspace (404 `profile_not_found` /
 * `tool_policy_not_found` / `mcp_server_not_found`). The type and its `agent_type.create` log are one
 * transaction; no Project event (agents never trigger on their own management).
 */
@Injectable()
export class CreateAgentTypeUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly logs: OperationLogWriter,
  ) {}

  async execute(actor: Actor, workspaceId: string, input: CreateAgentTypeInput): Promise<AgentTypeRow> {
    return inTransaction(this.db, async ({ tx }) => {
      const workspace = await requireAgentTypeWorkspace(tx, actor, workspaceId);
      const defaults = normaliseAgentDefaults(input.defaults);
      await checkAgentReferences(
        tx,
        { account_id: workspace.account_id, workspace_id: workspace.id },
        defaults,
      );
      const now = Date.now();
      const row = await agentsRepository.insertType(tx, {
        id: newId(ID_PREFIX.agentType),
        workspace_id: workspace.id,
        account_id: workspace.account_id,
        key: input.key,
        name: input.name,
        scope_kind: input.scope_kind,
        status: 'active',
        defaults: JSON.stringify(defaults),
        created_at: now,
        updated_at: now,
      });
      if (!row)
        throw new DomainError(
          'agent_type_key_conflict',
          409,
          `The key "${input.key}" is already used by an Agent Type of this Workspace`,
        );
      await this.logs.write(
        tx,
        actor,
        agentTypeLog('agent_type.create', row, { after_ref: agentTypeRef(row) }),
      );
      return row;
    });
  }
}
