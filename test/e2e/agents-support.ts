import { ID_PREFIX, newId } from '@hearth/domain';
import {
  accountsRepository,
  operationLogsRepository,
  type OperationLogRow,
  type WorkspaceRow,
} from '@hearth/persistence';
import type { TestApp } from '../support/test-app';

/** Helpers of the agent suites (agent-types, agent-bindings, agent-jobs, agents-access). */

export type Json = Record<string, any>;
export type Res = { status: number; body: Json };

/** The account's default Workspace (every account has one; Projects of the factories live there). */
export async function defaultWorkspace(t: TestApp, accountId: string): Promise<WorkspaceRow> {
  const workspace = await accountsRepository.findDefaultWorkspace(t.resources.database.db, accountId);
  if (!workspace) throw new Error(`account ${accountId} has no default Workspace`);
  return workspace;
}

/** A second, non-default Workspace of the account (there is no Workspace route: spec 1 point 7). */
export async function createExtraWorkspace(t: TestApp, accountId: string): Promise<WorkspaceRow> {
  const now = Date.now();
  return accountsRepository.insertWorkspace(t.resources.database.db, {
    id: newId(ID_PREFIX.workspace),
    account_id: accountId,
    name: 'Extra workspace',
    is_default: false,
    created_at: now,
    updated_at: now,
  });
}

/** `POST /workspaces/:id/agent-types`, expecting 201; the key is unique unless given. */
export async function createAgentType(
  t: TestApp,
  apiKey: string,
  workspaceId: string,
  body: Json = {},
): Promise<Json> {
  const res = await t.http
    .post(`/workspaces/${workspaceId}/agent-types`)
    .set('x-api-key', apiKey)
    .send({ key: `key-${newId('k')}`, name: 'Summariser', scope_kind: 'project', ...body });
  if (res.status !== 201)
    throw new Error(`POST agent-types answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body;
}

/** `POST /projects/:id/agent-bindings`, expecting 201. */
export async function createBinding(
  t: TestApp,
  apiKey: string,
  projectId: string,
  body: Json,
): Promise<Json> {
  const res = await t.http.post(`/projects/${projectId}/agent-bindings`).set('x-api-key', apiKey).send(body);
  if (res.status !== 201)
    throw new Error(`POST agent-bindings answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body;
}

/** `POST .../run`, expecting 202. */
export async function runBinding(
  t: TestApp,
  apiKey: string,
  projectId: string,
  bindingId: string,
  body: Json = {},
): Promise<Json> {
  const res = await t.http
    .post(`/projects/${projectId}/agent-bindings/${bindingId}/run`)
    .set('x-api-key', apiKey)
    .send(body);
  if (res.status !== 202) throw new Error(`POST run answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body;
}

/** `status` plus the error code, for compact expectations. */
export const outcome = (res: Res): string =>
  `${res.status}${res.body?.error ? ` ${res.body.error.code}` : ''}`;

/** Every agent row and agent log of the database: a refused request must leave it unchanged. */
export async function agentState(t: TestApp) {
  const db = t.resources.database.db;
  return {
    types: await db.selectFrom('agent_types').selectAll().orderBy('id').execute(),
    bindings: await db.selectFrom('agent_bindings').selectAll().orderBy('id').execute(),
    jobs: await db.selectFrom('jobs').selectAll().where('name', '=', 'agent.run').orderBy('id').execute(),
    logs: await db
      .selectFrom('operation_logs')
      .select(['id', 'action'])
      .where('action', 'like', 'agent%')
      .orderBy('id')
      .execute(),
  };
}

/** The operation logs of one action on one target, oldest first. */
export async function logsOf(
  t: TestApp,
  accountId: string,
  action: string,
  targetId: string,
): Promise<OperationLogRow[]> {
  return operationLogsRepository.list(
    t.resources.database.db,
    { accountId, filters: { action, target_id: targetId } },
    { limit: 100, offset: 0, sortOrder: 'asc' },
  );
}
