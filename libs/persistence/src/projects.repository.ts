import type { ExpressionBuilder, Insertable, Selectable } from 'kysely';
import { compiledOnce } from './compiled-once';
import type { Executor, Tx } from './database';
import type { Database, ProjectMembersTable, ProjectsTable } from './tables';

export type ProjectRow = Selectable<ProjectsTable>;
export type ProjectMemberRow = Selectable<ProjectMembersTable>;

export interface ProjectSubject {
  accountId: string;
  clientId: string;
  clientIsDefault: boolean;
}

export type ProjectWithRoleRow = ProjectRow & { role: ProjectMemberRow['role'] };

/** The member rows through which a subject holds a role (the `findActiveMemberRole` rule, as SQL). */
function subjectMemberships(eb: ExpressionBuilder<Database, 'project_members'>, subject: ProjectSubject) {
  const client = eb.and([
    eb('project_members.subject_type', '=', 'client'),
    eb('project_members.subject_id', '=', subject.clientId),
  ]);
  return subject.clientIsDefault
    ? eb.or([
        client,
        eb.and([
          eb('project_members.subject_type', '=', 'account'),
          eb('project_members.subject_id', '=', subject.accountId),
        ]),
      ])
    : client;
}

/**
 * The Projects a subject can read: those its account owns when it is the account's default Client
 * (ProjectAccess.roleOf), and those where it holds an active member role.
 */
export function projectReadableBy(eb: ExpressionBuilder<Database, 'projects'>, subject: ProjectSubject) {
  const member = eb.exists(
    eb
      .selectFrom('project_members')
      .select('project_members.id')
      .whereRef('project_members.project_id', '=', 'projects.id')
      .where('project_members.status', '=', 'active')
      .where((m) => subjectMemberships(m, subject)),
  );
  return subject.clientIsDefault
    ? eb.or([eb('projects.account_id', '=', subject.accountId), member])
    : member;
}

/** The Project gate of every Project route (ProjectAccess), compiled once (compiled-once.ts). */
const findProject = compiledOnce((db, id: string) =>
  db.selectFrom('projects').selectAll().where('id', '=', id),
);

/** An active membership of a Client that is not its account's default Client: `client` rows only. */
const findActiveClientRole = compiledOnce((db, projectId: string, clientId: string) =>
  db
    .selectFrom('project_members')
    .select('role')
    .where('project_id', '=', projectId)
    .where('status', '=', 'active')
    .where((eb) => eb.and([eb('subject_type', '=', 'client'), eb('subject_id', '=', clientId)])),
);

/**
 * An active membership of an account's default Client: its `client` rows or its account's rows. A
 * subject holding two roles (as account and as Client) reads with the wider one, as in `listReadableProjects`.
 */
const findActiveDefaultClientRole = compiledOnce(
  (db, projectId: string, clientId: string, accountId: string) =>
    db
      .selectFrom('project_members')
      .select('role')
      .where('project_id', '=', projectId)
      .where('status', '=', 'active')
      .where((eb) =>
        eb.or([
          eb.and([eb('subject_type', '=', 'client'), eb('subject_id', '=', clientId)]),
          eb.and([eb('subject_type', '=', 'account'), eb('subject_id', '=', accountId)]),
        ]),
      )
      .orderBy((o) => o.case().when('role', '=', 'deriver').then(0).else(1).end())
      .limit(1),
);

export const projectsRepository = {
  async insertProject(db: Executor, row: Insertable<ProjectsTable>): Promise<ProjectRow> {
    return db.insertInto('projects').values(row).returningAll().executeTakeFirstOrThrow();
  },

  async findProject(db: Executor, id: string): Promise<ProjectRow | undefined> {
    const [row] = await findProject(db, id);
    return row;
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
    const [row] = subject.clientIsDefault
      ? await findActiveDefaultClientRole(db, projectId, subject.clientId, subject.accountId)
      : await findActiveClientRole(db, projectId, subject.clientId);
    return row?.role;
  },

  /**
   * The Project row, locked until the transaction ends: `update` for a status change, `share` for a
   * write into the Project that must not race an archive (it waits for a pending archive to commit
   * and then sees the new status), `no_key_update` for a write that changes the row itself later in
   * the transaction (settings overrides): taken first, it waits for the share-lockers and they for it,
   * instead of both holding a share lock and deadlocking over the upgrade; foreign-key checks of other
   * writes (key share) do not wait for it.
   */
  async lockProject(
    tx: Tx,
    id: string,
    mode: 'update' | 'share' | 'no_key_update',
  ): Promise<ProjectRow | undefined> {
    const q = tx.selectFrom('projects').selectAll().where('id', '=', id);
    const locked = mode === 'update' ? q.forUpdate() : mode === 'share' ? q.forShare() : q.forNoKeyUpdate();
    return locked.executeTakeFirst();
  },

  /** Project status transitions have no route yet (spec 1: not shown); tests and later issues use this. */
  async updateProjectStatus(
    db: Executor,
    id: string,
    status: ProjectRow['status'],
    now = Date.now(),
  ): Promise<ProjectRow | undefined> {
    return db
      .updateTable('projects')
      .set({ status, updated_at: now })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst();
  },

  async insertMember(db: Executor, row: Insertable<ProjectMembersTable>): Promise<ProjectMemberRow> {
    return db.insertInto('project_members').values(row).returningAll().executeTakeFirstOrThrow();
  },

  /**
   * One page of the Projects a subject can read, newest first (keyset on the time-ordered id), each
   * with the subject's role. `role` narrows to owned Projects (`owner`) or to one member role.
   */
  async listReadableProjects(
    db: Executor,
    query: {
      subject: ProjectSubject;
      status: ProjectRow['status'];
      role?: ProjectMemberRow['role'];
      beforeId?: string;
      limit: number;
    },
  ): Promise<ProjectWithRoleRow[]> {
    const { subject } = query;
    const owned = subject.clientIsDefault;
    let q = db
      .selectFrom('projects')
      .selectAll('projects')
      .select((eb) => {
        const memberRole = eb
          .selectFrom('project_members')
          .select('project_members.role')
          .whereRef('project_members.project_id', '=', 'projects.id')
          .where('project_members.status', '=', 'active')
          .where((m) => subjectMemberships(m, subject))
          // A subject holding two roles (as account and as Client) reads with the wider one.
          .orderBy((o) => o.case().when('project_members.role', '=', 'deriver').then(0).else(1).end())
          .limit(1);
        return (
          owned
            ? eb
                .case()
                .when('projects.account_id', '=', subject.accountId)
                .then('owner')
                .else(memberRole)
                .end()
            : memberRole
        )
          .$castTo<ProjectMemberRow['role']>()
          .as('role');
      })
      .where('projects.status', '=', query.status)
      .where((eb) => projectReadableBy(eb, subject));
    if (query.role === 'owner') {
      q = owned ? q.where('projects.account_id', '=', subject.accountId) : q.where((eb) => eb.val(false));
    } else if (query.role) {
      const role = query.role;
      // The role the item shows: a subject that is both observer and deriver (as account and as
      // Client) reads as deriver, so `observer` lists only Projects where it holds no deriver membership.
      const membership = (eb: ExpressionBuilder<Database, 'projects'>, r: ProjectMemberRow['role']) =>
        eb.exists(
          eb
            .selectFrom('project_members')
            .select('project_members.id')
            .whereRef('project_members.project_id', '=', 'projects.id')
            .where('project_members.status', '=', 'active')
            .where('project_members.role', '=', r)
            .where((m) => subjectMemberships(m, subject)),
        );
      q = q.where((eb) =>
        eb.and([
          ...(owned ? [eb('projects.account_id', '!=', subject.accountId)] : []),
          membership(eb, role),
          ...(role === 'observer' ? [eb.not(membership(eb, 'deriver'))] : []),
        ]),
      );
    }
    if (query.beforeId) q = q.where('projects.id', '<', query.beforeId);
    return q.orderBy('projects.id', 'desc').limit(query.limit).execute() as Promise<ProjectWithRoleRow[]>;
  },
};
