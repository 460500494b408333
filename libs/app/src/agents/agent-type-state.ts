import { bindingWidening, DomainError, type AgentDefaults } from '@hearth/domain';
import { agentsRepository, type AgentTypeRow, type Tx } from '@hearth/persistence';
import { agentTypeNotFound } from './agent-access';
import { bindingSettings } from './agent-binding-fields';

/** The type of the Workspace locked FOR UPDATE (its bindings' writes wait), or 404 `agent_type_not_found`. */
export async function lockAgentTypeForUpdate(
  tx: Tx,
  workspaceId: string,
  agentTypeId: string,
): Promise<AgentTypeRow> {
  const type = await agentsRepository.lockType(tx, agentTypeId, 'update');
  if (!type || type.workspace_id !== workspaceId) throw agentTypeNotFound();
  return type;
}

/**
 * Spec 1: a type moves to `disabled` only while no binding of it is `enabled` (409
 * `agent_type_in_use`). Called with the type row locked FOR UPDATE, so a concurrent binding create
 * or enable (which share-locks it) is ordered before or after this check.
 */
export async function ensureAgentTypeNotInUse(tx: Tx, type: AgentTypeRow): Promise<void> {
  const enabled = await agentsRepository.countEnabledBindingsOfType(tx, type.id);
  if (enabled > 0)
    throw new DomainError(
      'agent_type_in_use',
      409,
      `The Agent Type has ${enabled} enabled binding(s); disable them first`,
      { enabled_binding_count: enabled },
    );
}

export interface BindingSetToError {
  id: string;
  project_id: string;
  previous_status: string;
  status_reason: string;
}

/**
 * After a type's defaults changed: every binding of the type (any Project, any status) whose set
 * overrides now widen the new defaults goes to `error`, with `status_reason` = the
 * `agent_override_expands_*` code it breaks (docs/decisions.md "Agents": spec 1 leaves transitions
 * into `error` open). A binding that still narrows keeps its status. Runs with the type locked FOR
 * UPDATE, so no binding write of the type runs meanwhile.
 */
export async function setWideningBindingsToError(
  tx: Tx,
  type: AgentTypeRow,
  defaults: AgentDefaults,
  now: number,
): Promise<BindingSetToError[]> {
  const changed: BindingSetToError[] = [];
  for (const binding of await agentsRepository.listBindingsOfType(tx, type.id)) {
    const widening = bindingWidening(defaults, bindingSettings(binding));
    if (!widening) continue;
    if (binding.status === 'error' && binding.status_reason === widening.code) continue;
    await agentsRepository.updateBinding(tx, binding.id, {
      status: 'error',
      status_reason: widening.code,
      updated_at: now,
    });
    changed.push({
      id: binding.id,
      project_id: binding.project_id,
      previous_status: binding.status,
      status_reason: widening.code,
    });
  }
  return changed;
}
