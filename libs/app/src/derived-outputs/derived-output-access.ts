import { Injectable } from '@nestjs/common';
import { DomainError } from '@hearth/domain';
import { ProjectAccess, type Actor, type ProjectGrant } from '@hearth/permissions';
import type { DerivedOutputRow, Executor, Tx } from '@hearth/persistence';
import { lockActiveProject } from '../projects/project-guards';

export const projectArchived = () => new DomainError('project_archived', 409, 'The Project is archived');

/** The capability of every derived output write, and the code of a member role without it. */
export const WRITE_CAPABILITY = 'project.derived_output.write';
export const WRITE_DENIED_CODE = 'derived_output_write_denied';

/**
 * Who may do what on derived outputs (spec 1 "Access by role"): every member reads, owner and
 * deriver write (observer 403 `derived_output_write_denied`), a deriver changes only entries its own
 * Client created (403 `derived_output_forbidden_for_role`). Every route of an archived Project answers
 * 409 `project_archived` (spec 1 "Errors"). Non-members: 404 `project_not_found`.
 */
@Injectable()
export class DerivedOutputAccess {
  constructor(private readonly access: ProjectAccess) {}

  async forRead(actor: Actor, projectId: string, db?: Executor): Promise<ProjectGrant> {
    const grant = await this.access.require(actor, projectId, 'project.read', { db });
    if (grant.project.status === 'archived') throw projectArchived();
    return grant;
  }

  async forWrite(actor: Actor, projectId: string, db?: Executor): Promise<ProjectGrant> {
    const grant = await this.access.require(actor, projectId, WRITE_CAPABILITY, {
      db,
      deniedCode: WRITE_DENIED_CODE,
    });
    if (grant.project.status === 'archived') throw projectArchived();
    return grant;
  }

  /**
   * For a change of an entry inside `tx` (update, archive): the Project row is share-locked before the
   * entry, as creates do, so an archive is ordered with the change (it waits for it, or the change
   * waits and then sees `archived`) and the two never deadlock.
   */
  async forChange(actor: Actor, projectId: string, tx: Tx): Promise<ProjectGrant> {
    const grant = await this.forWrite(actor, projectId, tx);
    return { project: await lockActiveProject(tx, grant.project.id), role: grant.role };
  }

  /** Owners change any entry; derivers only their own. */
  assertMayChange(actor: Actor, grant: ProjectGrant, entry: DerivedOutputRow): void {
    if (grant.role === 'owner') return;
    if (entry.created_by_client_id !== actor.clientId) {
      throw new DomainError(
        'derived_output_forbidden_for_role',
        403,
        'A deriver may update or archive only the derived outputs it created',
      );
    }
  }
}

export const derivedOutputNotFound = () =>
  new DomainError('derived_output_not_found', 404, 'Derived output not found');
