import type { Selectable } from 'kysely';
import type { Executor } from './database';
import type { WorkspacesTable } from './tables';

export type WorkspaceRecord = Selectable<WorkspacesTable>;

/** Named queries for Workspaces (creation is part of account provisioning, accountsRepository). */
export const workspacesRepository = {
  async findWorkspace(db: Executor, id: string): Promise<WorkspaceRecord | undefined> {
    return db.selectFrom('workspaces').selectAll().where('id', '=', id).executeTakeFirst();
  },
};
