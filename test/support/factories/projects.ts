import { DEFAULT_ACCOUNT_ID } from '@hearth/app';
import { ID_PREFIX, newId } from '@hearth/domain';
import { accountsRepository, projectsRepository, type ProjectRow } from '@hearth/persistence';
import type { TestApp } from '../test-app';

export interface ProjectOptions {
  /** The owner account; the default (admin) account unless given. */
  accountId?: string;
  name?: string;
  description?: string | null;
  kind?: ProjectRow['kind'];
  status?: ProjectRow['status'];
  settingsOverride?: unknown;
}

/**
 * A Project in the owner account's default Workspace, written through the repository (there is no
 * `POST /projects`, spec 1 "Capabilities not provided"). Manual and active unless told otherwise.
 */
export async function createProject(t: TestApp, options: ProjectOptions = {}): Promise<ProjectRow> {
  const db = t.resources.database.db;
  const accountId = options.accountId ?? DEFAULT_ACCOUNT_ID;
  const workspace = await accountsRepository.findDefaultWorkspace(db, accountId);
  if (!workspace) throw new Error(`account ${accountId} has no default Workspace`);
  const now = Date.now();
  return projectsRepository.insertProject(db, {
    id: newId(ID_PREFIX.project),
    workspace_id: workspace.id,
    account_id: accountId,
    name: options.name ?? 'Test project',
    description: options.description ?? null,
    kind: options.kind ?? 'manual',
    status: options.status ?? 'active',
    settings_override:
      options.settingsOverride === undefined ? null : JSON.stringify(options.settingsOverride),
    created_at: now,
    updated_at: now,
  });
}

/** Same as createProject, spelled out for the common case. */
export const createManualProject = (t: TestApp, options: Omit<ProjectOptions, 'kind'> = {}) =>
  createProject(t, { ...options, kind: 'manual' });

export async function findProject(t: TestApp, id: string): Promise<ProjectRow | undefined> {
  return projectsRepository.findProject(t.resources.database.db, id);
}

/** Archives a Project (there is no route for Project status changes yet). */
export async function archiveProject(t: TestApp, id: string): Promise<ProjectRow> {
  const project = await projectsRepository.updateProjectStatus(t.resources.database.db, id, 'archived');
  if (!project) throw new Error(`Project ${id} not found`);
  return project;
}
