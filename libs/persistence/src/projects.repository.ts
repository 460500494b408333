import type { Insertable, Selectable } from 'kysely';
import type { Executor } from './database';
import type { ProjectMembersTable, ProjectsTable } from './tables';

export type ProjectRow = Selectable<ProjectsTable>;
export type ProjectMemberRow = Selectable<ProjectMembersTable>;

export interface ProjectSubject {
  accountId: string;
  clientId: string;
  clientIsDefault: boolean;
}

export const projectsRepository = {
  async insertProject(db: Executor, row: Insertable<ProjectsTable>): Promise<ProjectRow> {
    return db.insertInto('projects').values(row).returningAll().executeTakeFirstOrThrow();
  },

  async findProject(db: Executor, id: string): Promise<ProjectRow | undefined> {
    return db.selectFrom('projects').selectAll().where('id', '=', id).executeTakeFirst();
  },

  /**
   * The active member role of a subject on a Project, if any: an `account` membership counts for
   * the account's default Client, a `client` membership for that Client.
   */
  async findActiveMemberRole(
    db: Executor,
    projectId: string,
    subject: ProjectSubject,
  ): Promise<ProjectMemberRow['role'] | undefined> {
    const row = await db
      .selectFrom('project_members')
      .select('role')
      .where('project_id', '=', projectId)
      .where('status', '=', 'active')
      .where((eb) => {
        const client = eb.and([eb('subject_type', '=', 'client'), eb('subject_id', '=', subject.clientId)]);
        return subject.clientIsDefault
          ? eb.or([client, eb.and([eb('subject_type', '=', 'account'), eb('subject_id', '=', subject.accountId)])])
          : client;
      })
      .executeTakeFirst();
    return row?.role;
  },
};
