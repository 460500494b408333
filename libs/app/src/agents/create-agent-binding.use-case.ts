import { Inject, Injectable } from '@nestjs/common';
import { DomainError, ID_PREFIX, newId } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import { agentsRepository, inTransaction, type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import { AgentProjectAccess, agentTypeNotFound } from './agent-access';
import {
  agentBindingLog,
  agentBindingRef,
  checkBindingCanBeEnabled,
  checkAgentReferences,
  normaliseBindingFields,
  type AgentBindingFieldsInput,
  type AgentBindingSettings,
} from './agent-binding-fields';
import type { AgentBindingWithType } from './get-agent-binding.use-case';

export interface CreateAgentBindingInput extends AgentBindingFieldsInput {
  agent_type_id: string;
}

const json = (value: unknown) => (value === null ? null : JSON.stringify(value));

/**
 * `POST /projects/:id/agent-bindings` (`project.agent.manage`): enables an Agent Type of the
 * Project's Workspace in the Project. The type must be of the Project's account (else 404
 * `agent_type_not_found`) and of its Workspace (409 `agent_type_workspace_mismatch`); then the
 * enabled-binding checks (scope, type active, narrowing) and the referenced profile, policy and MCP
 * servers (404, checkAgentReferences). The type row is share-locked, so a concurrent disable of the
 * type is ordered with this create. The binding starts `enabled`; it and its `agent_binding.create`
 * log are one transaction.
 */
@Injectable()
export class CreateAgentBindingUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: AgentProjectAccess,
    private readonly logs: OperationLogWriter,
  ) {}

  async execute(
    actor: Actor,
    projectId: string,
    input: CreateAgentBindingInput,
  ): Promise<AgentBindingWithType> {
    return inTransaction(this.db, async ({ tx }) => {
      const { project } = await this.access.forWrite(actor, projectId, 'project.agent.manage', tx);
      const columns = normaliseBindingFields(input);
      const type = await agentsRepository.lockType(tx, input.agent_type_id, 'share');
      if (!type || type.account_id !== project.account_id) throw agentTypeNotFound();
      if (type.workspace_id !== project.workspace_id)
        throw new DomainError(
          'agent_type_workspace_mismatch',
          409,
          'The Agent Type belongs to another Workspace than the Project',
          { agent_type_workspace_id: type.workspace_id, project_workspace_id: project.workspace_id },
        );
      const settings: AgentBindingSettings = {
        scope_kind: columns.scope_kind ?? type.scope_kind,
        llm_profile_id: columns.llm_profile_id ?? null,
        tool_policy_id: columns.tool_policy_id ?? null,
        mcp_bindings: columns.mcp_bindings ?? null,
        event_subscriptions: columns.event_subscriptions ?? null,
        grants: columns.grants ?? null,
        metadata: columns.metadata ?? {},
      };
      checkBindingCanBeEnabled(type, settings);
      await checkAgentReferences(tx, project, settings);
      const now = Date.now();
      const binding = await agentsRepository.insertBinding(tx, {
        id: newId(ID_PREFIX.agentBinding),
        workspace_id: project.workspace_id,
        project_id: project.id,
        account_id: project.account_id,
        agent_type_id: type.id,
        status: 'enabled',
        status_reason: null,
        scope_kind: settings.scope_kind,
        llm_profile_id: settings.llm_profile_id,
        tool_policy_id: settings.tool_policy_id,
        mcp_bindings: json(settings.mcp_bindings),
        event_subscriptions: json(settings.event_subscriptions),
        grants: json(settings.grants),
        metadata: JSON.stringify(settings.metadata),
        created_at: now,
        updated_at: now,
      });
      await this.logs.write(
        tx,
        actor,
        agentBindingLog('agent_binding.create', binding, {
          after_ref: agentBindingRef(binding),
          metadata: { agent_type_id: type.id },
        }),
      );
      return { binding, type };
    });
  }
}
