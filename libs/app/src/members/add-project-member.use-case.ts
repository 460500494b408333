import { Inject, Injectable } from '@nestjs/common';
import {
  assertAddableSubject,
  DomainError,
  ID_PREFIX,
  newId,
  parseMemberSubject,
  requireGrantableRole,
} from '@hearth/domain';
import { ProjectAccess, type Actor } from '@hearth/permissions';
import {
  inTransaction,
  membersRepository,
  projectsRepository,
  type Db,
  type ProjectMemberRow,
} from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { ProjectEventWriter } from '../events/project-event-writer';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import { isActiveRoleConflict, resolveSubjectForAdd } from './member-subjects';

export interface AddProjectMemberInput {
  role: string;
  account_id?: string | null;
  subject_type?: string | null;
  subject_id?: string | null;
}

const roleConflict = () =>
  new DomainError(
    'project_member_role_conflict',
    409,
    'The subject already holds a member role on this Project',
  );

/**
 * `POST /projects/:id/members` (owner only): grants observer or deriver to an account or a Client.
 * The member row, its `project_member.add` log and its `project_member.added` event (visibility
 * owner) are one transaction.
 */
@Injectable()
export class AddProjectMemberUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: ProjectAccess,
    private readonly logs: OperationLogWriter,
    private readonly events: ProjectEventWriter,
  ) {}

  async execute(actor: Actor, projectId: string, input: AddProjectMemberInput): Promise<ProjectMemberRow> {
    const { project } = await this.access.require(actor, projectId, 'project.members.manage');
    const role = requireGrantableRole(input.role);
    const subject = await resolveSubjectForAdd(this.db, parseMemberSubject(input));
    assertAddableSubject(project.account_id, subject);
    try {
      return await inTransaction(this.db, async (uow) => {
        const { tx } = uow;
        const existing = await membersRepository.findActiveMemberForUpdate(
          tx,
          project.id,
          subject.subjectType,
          subject.subjectId,
        );
        if (existing) throw roleConflict();
        const now = Date.now();
        const member = await projectsRepository.insertMember(tx, {
          id: newId(ID_PREFIX.member),
          workspace_id: project.workspace_id,
          project_id: project.id,
          account_id: subject.accountId,
          role,
          status: 'active',
          subject_type: subject.subjectType,
          subject_id: subject.subjectId,
          client_id: subject.clientId,
          created_by_account_id: actor.accountId,
          created_by_client_id: actor.clientId,
          created_at: now,
          updated_at: now,
        });
        const summary = {
          member_id: member.id,
          role,
          subject_type: member.subject_type,
          subject_id: member.subject_id,
          account_id: member.account_id,
          client_id: member.client_id,
        };
        const log = await this.logs.write(tx, actor, {
          action: 'project_member.add',
          account_id: project.account_id,
          workspace_id: project.workspace_id,
          project_id: project.id,
          target_type: 'project_member',
          target_id: member.id,
          after_ref: {
            role,
            status: member.status,
            subject_type: member.subject_type,
            subject_id: member.subject_id,
          },
          metadata: { role, subject_type: member.subject_type, subject_id: member.subject_id },
        });
        await this.events.record(uow, {
          project,
          type: 'project_member.added',
          visibility: 'owner',
          actor,
          operation_log_id: log.id,
          payload: summary,
        });
        return member;
      });
    } catch (error) {
      if (isActiveRoleConflict(error)) throw roleConflict();
      throw error;
    }
  }
}
