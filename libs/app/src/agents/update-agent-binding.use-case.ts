import { Inject, Injectable } from '@nestjs/common';
import { jsonEqual } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import { agentsRepository, inTransaction, type AgentBindingsTable, type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import type { Updateable } from 'kysely';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import { AgentProjectAccess, lockBindingWithType } from './agent-access';
import {
  agentBindingLog,
  agentBindingRef,
  bindingSettings,
  checkBindingCanBeEnabled,
  checkAgentReferences,
  normaliseBindingFields,
  type AgentBindingFieldsInput,
  type AgentBindingSettings,
} from './agent-binding-fields';
import type { AgentBindingWithType } from './get-agent-binding.use-case';

export interface UpdateAgentBindingInput extends AgentBindingFieldsInput {
  /** `error` is not settable: the service moves a binding there (UpdateAgentTypeUseCase). */
  status?: 'enabled' | 'disabled';
}

const FIELDS = [
  'scope_kind',
  'llm_profile_id',
  'tool_policy_id',
  'mcp_bindings',
  'event_subscriptions',
  'grants',
  'metadata',
] as const satisfies ReadonlyArray<keyof AgentBindingSettings>;

const JSON_FIELDS = new Set(['mcp_bindings', 'event_subscriptions', 'grants', 'metadata']);

/**
 * `PATCH /projects/:id/agent-bindings/:binding_id` (`project.agent.manage`): only the given fields
 * change; null on an override field inherits the type's default again. A binding that is `enabled`
 * after the change passes the create checks (scope, type active, narrowing); enabling a binding in
 * `error` clears its `status_reason`. A set profile or policy id, and an MCP server id the binding did
 * not name yet, must exist in the Project's Workspace (404, checkAgentReferences), whatever the
 * status. Type, then binding, are locked (the type FOR SHARE). The change and its
 * `agent_binding.update` log are one transaction; a PATCH that changes nothing writes nothing.
 */
@Injectable()
export class UpdateAgentBindingUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: AgentProjectAccess,
    private readonly logs: OperationLogWriter,
  ) {}

  async execute(
    actor: Actor,
    projectId: string,
    bindingId: string,
    input: UpdateAgentBindingInput,
  ): Promise<AgentBindingWithType> {
    return inTransaction(this.db, async ({ tx }) => {
      const { project } = await this.access.forWrite(actor, projectId, 'project.agent.manage', tx);
      const columns = normaliseBindingFields(input);
      const { binding, type } = await lockBindingWithType(tx, project.id, bindingId);
      const current = bindingSettings(binding);
      const next = bindingSettings(binding, columns);
      const status = input.status ?? binding.status;
      if (status === 'enabled') checkBindingCanBeEnabled(type, next);
      await checkAgentReferences(
        tx,
        project,
        columns,
        current.mcp_bindings?.map((m) => m.mcp_server_id),
      );
      const changes: Updateable<AgentBindingsTable> = {};
      const changed: string[] = [];
      for (const field of FIELDS) {
        if (jsonEqual(current[field], next[field])) continue;
        changed.push(field);
        const value = next[field];
        (changes as Record<string, unknown>)[field] =
          JSON_FIELDS.has(field) && value !== null ? JSON.stringify(value) : value;
      }
      const statusReason = status === 'error' ? binding.status_reason : null;
      if (status !== binding.status) changed.push('status');
      if (changed.length === 0 && statusReason === binding.status_reason) return { binding, type };
      const updated = await agentsRepository.updateBinding(tx, binding.id, {
        ...changes,
        status,
        status_reason: statusReason,
        updated_at: Date.now(),
      });
      await this.logs.write(
        tx,
        actor,
        agentBindingLog('agent_binding.update', updated, {
          before_ref: agentBindingRef(binding),
          after_ref: agentBindingRef(updated),
          diff: { changed_fields: changed },
        }),
      );
      return { binding: updated, type };
    });
  }
}
