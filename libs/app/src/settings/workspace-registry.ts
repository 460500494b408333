import { DomainError } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import { accountsRepository, type Executor, type WorkspaceRow } from '@hearth/persistence';

/**
 * The Workspace registries (MCP servers, tool policies) are legacy configuration routes: they read and
 * write the caller's account's default Workspace (spec 1 "compatibility rules" 8). Every Client of the
 * account reads them; only the account itself (its default Client) changes them, because a change
 * reaches every Project that binds the record (403 `<kind>_account_only`, like `client_account_only`).
 */
export async function registryWorkspace(db: Executor, actor: Actor): Promise<WorkspaceRow> {
  const workspace = await accountsRepository.findDefaultWorkspace(db, actor.accountId);
  if (!workspace) throw new Error(`account ${actor.accountId} has no default Workspace`);
  return workspace;
}

export function requireRegistryWriter(actor: Actor, kind: 'mcp_server' | 'tool_policy'): void {
  if (actor.kind !== 'account') {
    const what = kind === 'mcp_server' ? 'MCP servers' : 'tool policies';
    throw new DomainError(
      `${kind}_account_only`,
      403,
      `Only the account’s default Client may change ${what}`,
    );
  }
}

/** 409 `<kind>_name_conflict`: names are unique per Workspace. */
export const registryNameConflict = (kind: 'mcp_server' | 'tool_policy', name: string) =>
  new DomainError(`${kind}_name_conflict`, 409, `The name "${name}" is already used in this Workspace`);
