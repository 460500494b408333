import { Inject, Injectable } from '@nestjs/common';
import { ID_PREFIX } from '@hearth/domain';
import { ProjectAccess, type Actor } from '@hearth/permissions';
import { membersRepository, type Db, type ProjectMemberRow, type ProjectRow } from '@hearth/persistence';
import { DB } from '@hearth/platform';

/**
 * The owner as a member row. Ownership is not stored as a member row (ProjectAccess derives it from
 * the Project's account), so the list synthesises it with a stable id derived from the Project id.
 */
export function ownerMemberRow(project: ProjectRow): ProjectMemberRow {
  return {
    id: `${ID_PREFIX.member}_owner_${project.id}`,
    workspace_id: project.workspace_id,
    project_id: project.id,
    account_id: project.account_id,
    role: 'owner',
    status: 'active',
    subject_type: 'account',
    subject_id: project.account_id,
    client_id: null,
    created_by_account_id: null,
    created_by_client_id: null,
    created_at: project.created_at,
    updated_at: project.created_at,
  };
}

/**
 * `GET /projects/:id/members`: any member (owner, observer, deriver) may list. The owner comes first,
 * then the active members in the order they were added; removed members are not listed.
 */
@Injectable()
export class ListProjectMembersUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: ProjectAccess,
  ) {}

  async execute(actor: Actor, projectId: string): Promise<ProjectMemberRow[]> {
    const { project } = await this.access.require(actor, projectId, 'project.read');
    const members = await membersRepository.listActiveMembers(this.db, project.id);
    const storedOwner = members.some((m) => m.role === 'owner');
    return storedOwner ? members : [ownerMemberRow(project), ...members];
  }
}
