import { Injectable } from '@nestjs/common';
import { DomainError } from '@hearth/domain';
import { ProjectAccess, type Actor, type ProjectCapability, type ProjectGrant } from '@hearth/permissions';
import {
  agentsRepository,
  projectsRepository,
  workspacesRepository,
  type AgentBindingRow,
  type AgentTypeRow,
  type Executor,
  type Tx,
  type WorkspaceRecord,
} from '@hearth/persistence';
import { ensureProjectActive } from '../projects/project-guards';

export const agentTypeNotFound = () => new DomainError('agent_type_not_found', 404, 'Agent Type not found');
export const bindingNotFound = () => new DomainError('binding_not_found', 404, 'Agent Binding not found');

const workspaceNotFound = () => new DomainError('not_found', 404, 'Workspace not found');

/**
 * The gate of the Agent Type routes (spec 1 "Agent Types (account actors only)"): a non-default
 * Client gets 403 `agent_type_account_only` before anything is read; the Workspace must be one of
 * the caller's account, else 404 (another account's Workspace is not revealed): `not_found` on the
 * Workspace routes (list, create), `agent_type_not_found` on the routes of one type (`notFound`),
 * whose type is then "not of this account" (spec 1 "Errors").
 */
export async function requireAgentTypeWorkspace(
  db: Executor,
  actor: Actor,
  workspaceId: string,
  notFound: () => DomainError = workspaceNotFound,
): Promise<WorkspaceRecord> {
  requireAgentTypeActor(actor);
  const workspace = await workspacesRepository.findWorkspace(db, workspaceId);
  if (!workspace || workspace.account_id !== actor.accountId) throw notFound();
  return workspace;
}

/** 403 `agent_type_account_only` for any caller but an account (its default Client). */
export function requireAgentTypeActor(actor: Actor): void {
  if (actor.kind !== 'account')
    throw new DomainError(
      'agent_type_account_only',
      403,
      'Agent Types are managed by the account itself (its default Client), not by other Clients',
    );
}

/** A type of the Workspace, or 404 `agent_type_not_found`. */
export async function requireAgentType(
  db: Executor,
  workspaceId: string,
  agentTypeId: string,
): Promise<AgentTypeRow> {
  const type = await agentsRepository.findType(db, workspaceId, agentTypeId);
  if (!type) throw agentTypeNotFound();
  return type;
}

/**
 * Who may use the Agent Binding and Agent Job routes (spec 1 "Access by role"): the capability
 * through ProjectAccess (non-members 404 `project_not_found`, members without it 403
 * `project_access_denied`). Writes into an archived Project answer 409 `project_archived`, reads
 * still work; a write share-locks the Project row so a concurrent archive is ordered with it.
 */
@Injectable()
export class AgentProjectAccess {
  constructor(private readonly access: ProjectAccess) {}

  forRead(actor: Actor, projectId: string, db?: Executor): Promise<ProjectGrant> {
    return this.access.require(actor, projectId, 'project.agent.read', { db });
  }

  async forWrite(
    actor: Actor,
    projectId: string,
    capability: ProjectCapability,
    tx: Tx,
    options: { allowArchived?: boolean } = {},
  ): Promise<ProjectGrant> {
    const grant = await this.access.require(actor, projectId, capability, { db: tx });
    const project = await projectsRepository.lockProject(tx, grant.project.id, 'share');
    if (!project) throw new DomainError('project_not_found', 404, 'Project not found');
    if (!options.allowArchived) ensureProjectActive(project);
    return { project, role: grant.role };
  }
}

/** The binding of this Project (unlocked: to learn its type before locking type, then binding). */
export async function requireBinding(
  db: Executor,
  projectId: string,
  bindingId: string,
): Promise<AgentBindingRow> {
  const binding = await agentsRepository.findBinding(db, projectId, bindingId);
  if (!binding) throw bindingNotFound();
  return binding;
}

/**
 * Locks, in the one order every agent write uses (type, then binding), the binding's type and the
 * binding itself: a type change (FOR UPDATE) and a binding change (type FOR SHARE) are serialised,
 * and never deadlock on each other.
 */
export async function lockBindingWithType(
  tx: Tx,
  projectId: string,
  bindingId: string,
  bindingMode: 'update' | 'share' = 'update',
): Promise<{ binding: AgentBindingRow; type: AgentTypeRow }> {
  const seen = await requireBinding(tx, projectId, bindingId);
  const type = await agentsRepository.lockType(tx, seen.agent_type_id, 'share');
  const binding = await agentsRepository.lockBinding(tx, projectId, bindingId, bindingMode);
  if (!type || !binding) throw bindingNotFound();
  return { binding, type };
}
