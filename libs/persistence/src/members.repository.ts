import type { Selectable } from 'kysely';
import type { Executor, Tx } from './database';
import type { ProjectMemberRow } from './projects.repository';
import type { ClientsTable } from './tables';

/**
 * Named queries of the members routes (spec 1 "Members"). Inserting a member row is
 * `projectsRepository.insertMember`; access decisions stay in ProjectAccess.
 */
export const membersRepository = {
  /** The active members of a Project, in the order they were added. */
  async listActiveMembers(db: Executor, projectId: string): Promise<ProjectMemberRow[]> {
    return db
      .selectFrom('project_members')
      .selectAll()
      .where('project_id', '=', projectId)
      .where('status', '=', 'active')
      .orderBy('created_at', 'asc')
      .orderBy('id', 'asc')
      .execute();
  },

  /** One member row by id, whatever its status (removed rows are kept). */
  async findMember(db: Executor, projectId: string, memberId: string): Promise<ProjectMemberRow | undefined> {
    return db
      .selectFrom('project_members')
      .selectAll()
      .where('project_id', '=', projectId)
      .where('id', '=', memberId)
      .executeTakeFirst();
  },

  /** The active member row of one subject, locked until the transaction ends. */
  async findActiveMemberForUpdate(
    tx: Tx,
    projectId: string,
    subjectType: ProjectMemberRow['subject_type'],
    subjectId: string,
  ): Promise<ProjectMemberRow | undefined> {
    return tx
      .selectFrom('project_members')
      .selectAll()
      .where('project_id', '=', projectId)
      .where('subject_type', '=', subjectType)
      .where('subject_id', '=', subjectId)
      .where('status', '=', 'active')
      .forUpdate()
      .executeTakeFirst();
  },

  /** Marks an active member removed; the row is kept. Undefined when it was not active any more. */
  async markRemoved(tx: Tx, memberId: string, now: number): Promise<ProjectMemberRow | undefined> {
    return tx
      .updateTable('project_members')
      .set({ status: 'removed', updated_at: now })
      .where('id', '=', memberId)
      .where('status', '=', 'active')
      .returningAll()
      .executeTakeFirst();
  },

  /** A Client by id, of any account: the subject of a `client` membership. */
  async findSubjectClient(db: Executor, clientId: string): Promise<Selectable<ClientsTable> | undefined> {
    return db.selectFrom('clients').selectAll().where('id', '=', clientId).executeTakeFirst();
  },
};
