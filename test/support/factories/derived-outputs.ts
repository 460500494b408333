import {
  derivedOutputsRepository,
  operationLogsRepository,
  projectEventsRepository,
  type DerivedOutputRow,
  type OperationLogRow,
  type ProjectEventRow,
  type ProjectRow,
} from '@hearth/persistence';
import type { TestApp } from '../test-app';

/** The derived output JSON of the API (spec 1 "Derived Output"). */
export interface DerivedOutputJson {
  id: string;
  workspace_id: string;
  project_id: string;
  account_id: string;
  owner_account_id: string;
  source_session_id: string | null;
  source_floor_id: string | null;
  source_page_id: string | null;
  domain: string;
  value: unknown;
  status: 'draft' | 'published' | 'archived';
  created_at: number;
  updated_at: number;
}

/** Creates a derived output through `POST /projects/:id/derived-outputs` and expects 201. */
export async function createDerivedOutput(
  t: TestApp,
  projectId: string,
  apiKey: string,
  body: Record<string, unknown> = {},
): Promise<DerivedOutputJson> {
  const res = await t.http
    .post(`/projects/${projectId}/derived-outputs`)
    .set('x-api-key', apiKey)
    .send({ domain: 'summary', value: { text: 'factory' }, ...body });
  if (res.status !== 201)
    throw new Error(`POST derived-outputs answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.item as DerivedOutputJson;
}

export async function derivedOutputRows(t: TestApp, projectId: string): Promise<DerivedOutputRow[]> {
  return derivedOutputsRepository.listAllOfProject(t.resources.database.db, projectId);
}

/** Every event of a Project that a reader could see (`project` and `owner`), in sequence order. */
export async function projectEventRows(t: TestApp, projectId: string): Promise<ProjectEventRow[]> {
  return projectEventsRepository.listAfter(t.resources.database.db, {
    projectId,
    after: 0,
    visibilities: ['project', 'owner'],
    limit: 10000,
  });
}

/** Every operation log row of a Project (they are stored under the Project owner's account). */
export async function projectLogRows(
  t: TestApp,
  project: Pick<ProjectRow, 'id' | 'account_id'>,
): Promise<OperationLogRow[]> {
  return operationLogsRepository.list(
    t.resources.database.db,
    { accountId: project.account_id, filters: { project_id: project.id } },
    { limit: 10000, offset: 0, sortOrder: 'asc' },
  );
}

/** What a Project holds: derived output rows, events and logs, to show a failed write left nothing. */
export async function projectJournal(t: TestApp, project: Pick<ProjectRow, 'id' | 'account_id'>) {
  const [rows, events, logs] = await Promise.all([
    derivedOutputRows(t, project.id),
    projectEventRows(t, project.id),
    projectLogRows(t, project),
  ]);
  return { rows, events, logs };
}
